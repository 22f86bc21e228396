"""A running simulation paused, copied, and continued under another config: what a merged budget
change does to a running cluster.

``allot plan`` asks what a pull request does once merged.  When it merges, the cluster's usage
windows, queues and running jobs were made under the *base* config; only from then on does the
head's policy decide.  So a plan warms both sides up once, under the base, and switches the head
in at the start of the measured part (docs/plan.md, "What is simulated"): both sides
share that warm-up, which also saves a quarter of a cold plan's simulation.

* :func:`start` builds a run as ``runner.simulate`` does and :func:`pause` runs it up to an
  instant (``_Sim.run(until=...)``, which resumes exactly: tests/sim/test_switch.py);
* :func:`switched` is a copy of a paused run continued under another config (:func:`switch`
  continues the run itself, when its base side is not needed): every mutable part copied, only
  what never changes shared (the core context, the jobs themselves), the source of the jobs
  still to arrive forked at the run's position (``traces.job_stream``: neither copy holds the
  workload whole); the scheduler is rebuilt from the running and pending jobs with the core's own ``add_running``/``add_pending`` (what a reconciler does
  after a config change: ``core.decide.build_scheduler``), keeping each job's age, kept work,
  protection, anti-thrash mark and dependency-propagated priority; the usage ledger, the event
  queue and the metrics recorder go on as they were.  Under the same config the switched run is
  byte-identical to one never switched (tested), so a plan with no effective change stays clean.

What the switch cannot carry over is refused (``sim/switchable.py``); the plan then warms the
head up under the head alone, as before (``plan/impact_units.py``).
"""

from __future__ import annotations

import copy
import copyreg
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.core.context import Context, build_context
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.usage import UsageLedger, _Curve
from allotment.sim.eventlog import EventLog
from allotment.sim.known_dependencies import KnownDependencies
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.metrics import Recorder, _Job
from allotment.sim.overrides import apply_overrides
from allotment.sim.runner import _Sim, check_run
from allotment.sim.signals import HourlySignal
from allotment.traces.job_stream import JobSource
from allotment.traces.scenarios.workload import Workload


def start(
    config: CompiledConfig,
    workload: Workload | JobSource,
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


def switched(sim: _Sim, config: CompiledConfig, *, policy: str = "budgets",
             overrides: Mapping[str, str] | None = None) -> _Sim:
    """A copy of the paused ``sim`` continued under ``config``; ``sim`` is left as it was (its
    scheduler is only read, to build the copy's own).  Every other attribute of the run is
    deep-copied (``_COPIED``: the compiled classes among them have no ``__reduce__`` that
    ``copy`` can use, so each is rebuilt through its ``__init__`` and its attributes set), except
    what never changes, which is shared: the context, the jobs and what is derived from them;
    the source of the jobs still to arrive is forked at the run's position."""
    ctx = _context(config, sim.rec.header.cluster, policy, overrides)
    out = _Sim(config, sim.rec.header.cluster, Workload((), ()), sim.horizon / 86400.0, ctx,
               seed=sim.rec.header.seed, walk=sim.sched.walk)
    out.source = sim.source.fork()
    # the jobs arrived and not gone, and the next to arrive: immutable, shared
    memo: dict[int, object] = {id(spec): spec for spec in (*sim.by_id.values(), sim.upcoming)}
    # immutable records (compiled frozen dataclasses cannot be deep-copied): shared; so are
    # the event queue's entries, read and never changed (a requeued job's entry holds the
    # pending record the old scheduler gave up, read once when it is queued again)
    for record in (sim.rec.header, *(sim.log.kept or ()), *sim.heap):
        memo[id(record)] = record
    # who depends on whom: each job's dependants, a list never changed once made
    for got in sim.known_deps.dependants.values():
        memo[id(got)] = got
    for shared in _SHARED:
        value = getattr(sim, shared)
        memo[id(value)] = value
        setattr(out, shared, value)
    with _copyable():
        for name in _attrs(sim):
            if name not in _SHARED and name not in _REBUILT and name != "source":
                setattr(out, name, copy.deepcopy(getattr(sim, name), memo))
    _rebuild(out, sim.sched, ctx)
    return out


def switch(sim: _Sim, config: CompiledConfig, *, policy: str = "budgets",
           overrides: Mapping[str, str] | None = None) -> None:
    """Continue the paused ``sim`` itself under ``config`` (no copy: the base side is not
    needed any more).  The caller checks ``sim.switchable.switch_refusal`` first."""
    _rebuild(sim, sim.sched, _context(config, sim.rec.header.cluster, policy, overrides))


# what a switched copy shares with the run it copies (never changed after the run is built;
# ``source`` is forked, and ``by_id``, ``known_deps`` and ``dependents`` change as the run goes: copied)
_SHARED = ("gpus_of", "horizon", "last_decisions", "latency")
# what the switch builds anew for the new config
_REBUILT = ("ctx", "sched", "_views")


def _rebuild(sim: _Sim, old: Scheduler, ctx: Context) -> None:
    """``sim`` decides under ``ctx`` from now on: a scheduler for ``ctx`` holding ``old``'s
    running and pending jobs, each with its age, kept work, protection, anti-thrash mark and
    declared priority as the run's dependency pass last gave it (``sim.known_dependencies``); the recorder's header
    gets the new entitlements and ceilings."""
    pool = old.state.pool
    nodes = tuple(NodeState(n, pool.total[i], True, pool.gpu_type[i]) for i, n in enumerate(pool.names))
    new = Scheduler(ctx, nodes, walk=old.walk)
    for i, n in enumerate(pool.names):
        if not pool.healthy[i]:
            new.state.set_health(n, False, old.state.unhealthy_since.get(i, 0.0))
    new.state.unhealthy_since = dict(old.state.unhealthy_since)
    for r in old.state.running.values():  # in the order they started, as the run holds them
        new.state.add_running(
            r.spec, r.start, tuple((pool.names[i], g) for i, g in r.placement),
            allocated=r.allocated, protected_until=r.protected_until, done_before=r.done_before,
            declared=r.declared, evicted_by=r.evicted_by, eligible=r.eligible, yields=r.yields,
            noticed_at=old.state.noticed.get(r.jid),
        )
    for p in old.state.pending.values():
        new.state.add_pending(p.spec, p.eligible, p.queued_since, done_work=p.done_work,
                        declared=p.declared, evicted_by=p.evicted_by)
    new.kept = dict(old.kept)  # the holds kept by their holders (knob keep_hold), as a reconciler persists them
    sim.ctx = ctx
    sim.sched = new
    sim._views = {}
    caps = {leaf: float(c) for leaf in ctx.leaves if (c := new.state.ceiling(leaf)) is not None}
    sim.rec.header = dataclasses.replace(
        sim.rec.header, entitlement_gpus=dict(ctx.entitlement_gpus), ceilings=caps,
        capacity_gpus=ctx.capacity_gpus, debug_threshold_s=float(ctx.policy.debug_threshold_s),
    )


# The run's mutable parts and the arguments each is built with; its attributes are then set.
_COPIED: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    UsageLedger: lambda o: (o.lookback_s,),
    _Curve: lambda o: (),
    Recorder: lambda o: (o.header,),
    _Job: lambda o: (o.account, o.gpus, o.budgeted, o.kind),
    HourlySignal: lambda o: (),
    EventLog: lambda o: (o.rec,),
    KnownDependencies: lambda o: (),
}


def _attrs(obj: object) -> tuple[str, ...]:
    """Every attribute of ``obj``: a compiled class lists them in ``__mypyc_attrs__``."""
    names = getattr(type(obj), "__mypyc_attrs__", None)
    if names is not None:
        return tuple(names)
    out: list[str] = []
    for klass in type(obj).__mro__:
        slots = getattr(klass, "__slots__", ())
        out += [slots] if isinstance(slots, str) else list(slots)
    out += list(getattr(obj, "__dict__", {}))
    return tuple(dict.fromkeys(out))


def _rebuilt(cls: type, args: tuple[Any, ...], attrs: dict[str, Any]) -> object:
    obj = cls(*args)
    for name, value in attrs.items():
        setattr(obj, name, value)
    return obj


def _reduce(obj: object) -> tuple[Any, ...]:
    """What ``copy.deepcopy`` rebuilds ``obj`` from: its class, its ``__init__`` arguments and
    its attributes, all deep-copied first.  (Not the ``state`` slot of the protocol: a compiled
    class's own ``__setstate__`` ignores a slot-state pair.)  The run holds no reference cycles
    (tests/sim/test_no_cycles.py), so an object never needs itself to be built."""
    args = _COPIED[type(obj)](obj)
    return _rebuilt, (type(obj), args, {a: getattr(obj, a) for a in _attrs(obj)})


@contextmanager
def _copyable() -> Iterator[None]:
    """``copy.deepcopy`` rebuilds the ``_COPIED`` classes through ``_reduce`` meanwhile (in
    source form as compiled, so the tests run the path a compiled plan runs)."""
    saved = {cls: copyreg.dispatch_table.get(cls) for cls in _COPIED}
    for cls in _COPIED:
        copyreg.dispatch_table[cls] = _reduce
    try:
        yield
    finally:
        for cls, was in saved.items():
            if was is None:
                del copyreg.dispatch_table[cls]
            else:
                copyreg.dispatch_table[cls] = was


def _context(config: CompiledConfig, cluster: str, policy: str, overrides: Mapping[str, str] | None) -> Context:
    pol = apply_overrides(config.policy_for(cluster), overrides or {}, cluster, config.clusters[cluster].node_names)
    return build_context(config, cluster, mode=policy, policy=pol)
