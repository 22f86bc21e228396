"""A running simulation paused, copied, and continued under another config: what a merged budget
change does to a running cluster.

``allot plan`` asks what a pull request does once merged.  When it merges, the cluster's usage
windows, queues and running jobs were made under the *base* config; only from then on does the
head's policy decide.  So a plan warms both sides up once, under the base, and switches the head
in at the start of the measured part (docs/plan.md, "One warm-up under the base"): both sides
share that warm-up, which also saves a third of a cold plan's simulation.

* :func:`start` builds a run as ``runner.simulate`` does and :func:`pause` runs it up to an
  instant (``_Sim.run(until=...)``, which resumes exactly: tests/sim/test_switch.py);
* :func:`fork` is an exact copy of a paused run (``copy.deepcopy``, sharing only what never
  changes: the configs, the core context and the workload's jobs);
* :func:`switch` continues a copy under another config: the scheduler is rebuilt from the running
  and pending jobs with the core's own ``add_running``/``add_pending`` (what a reconciler does
  after a config change: ``core.decide.build_scheduler``), keeping each job's age, kept work,
  protection, anti-thrash mark and dependency-propagated priority; the usage ledger, the event
  queue and the metrics recorder go on as they were.  Under the same config the switched run is
  byte-identical to one never switched (tested), so a plan with no effective change stays clean.

What the switch cannot carry over is refused (``sim/switchable.py``); the plan then warms the
head up under the head alone, as before (``plan/impact_units.py``).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping

from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.core.context import Context, build_context
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.overrides import apply_overrides
from allotment.sim.runner import BACK, _Sim, check_run
from allotment.traces.scenarios.workload import Workload


def start(
    config: CompiledConfig,
    workload: Workload,
    *,
    cluster: str,
    days: float,
    seed: int = 0,
    policy: str = "budgets",
    overrides: Mapping[str, str] | None = None,
    latency: LatencyProfile = NONE,
) -> _Sim:
    """A run of ``workload`` over ``days``, built as ``runner.simulate`` builds it, not started."""
    check_run(config, cluster, policy)
    sim = _Sim(config, cluster, workload, days, _context(config, cluster, policy, overrides), seed=seed)
    sim.latency = latency
    return sim


def pause(sim: _Sim, at: float) -> None:
    """Run ``sim`` up to ``at``: everything before it applied, nothing at or after it."""
    with bulk_allocation():
        sim.run(until=at)


def finish(sim: _Sim) -> None:
    """Run ``sim`` on to its horizon and stamp its end on the recorder's header (what
    ``sim.window.measured`` reads; the whole run's summary is not computed)."""
    with bulk_allocation():
        sim.run()
    sim.rec.header = dataclasses.replace(sim.rec.header, end=sim.end)


def fork(sim: _Sim) -> _Sim:
    """An exact copy of the paused ``sim``: what either one does later leaves the other as it
    was.  The configs, the core context and the workload's jobs are shared (never changed)."""
    return copy.deepcopy(sim, _shared(sim))


def switched(sim: _Sim, config: CompiledConfig, *, policy: str = "budgets",
             overrides: Mapping[str, str] | None = None) -> _Sim:
    """A copy of the paused ``sim`` continued under ``config``; ``sim`` is left as it was.  Its
    scheduler is not copied: :func:`switch` only reads it, to build the copy's own."""
    memo = _shared(sim)
    memo[id(sim.sched)] = sim.sched
    out: _Sim = copy.deepcopy(sim, memo)
    switch(out, config, policy=policy, overrides=overrides)
    return out


def _shared(sim: _Sim) -> dict[int, object]:
    memo: dict[int, object] = {id(sim.ctx): sim.ctx, id(sim.jobs): sim.jobs, id(sim.by_id): sim.by_id,
                               id(sim.declared): sim.declared, id(sim.dependents): sim.dependents}
    for spec in sim.jobs:
        memo[id(spec)] = spec
    return memo


def switch(sim: _Sim, config: CompiledConfig, *, policy: str = "budgets",
           overrides: Mapping[str, str] | None = None) -> None:
    """Continue the paused ``sim`` (a :func:`fork`) under ``config`` from its pause on.  The
    caller checks ``sim.switchable.switch_refusal`` first."""
    if any(kind == BACK for _, kind, _, _, _ in sim.heap):
        raise ValueError("a requeued job waits for its eligibility delay: not switchable")
    cluster = sim.rec.header.cluster
    ctx = _context(config, cluster, policy, overrides)
    old = sim.sched
    pool = old.pool
    nodes = tuple(NodeState(n, pool.total[i], True, pool.gpu_type[i]) for i, n in enumerate(pool.names))
    new = Scheduler(ctx, nodes, walk=old.walk)
    for i, n in enumerate(pool.names):
        if not pool.healthy[i]:
            new.set_health(n, False, old.unhealthy_since.get(i, 0.0))
    new.unhealthy_since = dict(old.unhealthy_since)
    for r in old.running.values():  # in the order they started, as the run holds them
        new.add_running(
            r.spec, r.start, tuple((pool.names[i], g) for i, g in r.placement),
            allocated=r.allocated, protected_until=r.protected_until, done_before=r.done_before,
            declared=r.declared, evicted_by=r.evicted_by, eligible=r.eligible, yields=r.yields,
        )
    for p in old.pending.values():
        new.add_pending(p.spec, p.eligible, p.queued_since, done_work=p.done_work,
                        declared=p.declared, evicted_by=p.evicted_by)
    sim.ctx = ctx
    sim.sched = new
    sim._views = {}
    caps = {leaf: float(c) for leaf in ctx.leaves if (c := new.ceiling(leaf)) is not None}
    sim.rec.header = dataclasses.replace(
        sim.rec.header, entitlement_gpus=dict(ctx.entitlement_gpus), ceilings=caps,
        capacity_gpus=ctx.capacity_gpus, debug_threshold_s=float(ctx.policy.debug_threshold_s),
    )


def _context(config: CompiledConfig, cluster: str, policy: str, overrides: Mapping[str, str] | None) -> Context:
    pol = apply_overrides(config.policy_for(cluster), overrides or {})
    return build_context(config, cluster, mode=policy, policy=pol)
