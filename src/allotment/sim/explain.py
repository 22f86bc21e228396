"""Why a job waits (or runs): replay a workload up to a moment, then show the decision metrics.

The replay stops at ``at`` (default: the first pass after the job became eligible), runs the very
pass the simulator runs there (same walk, same inputs: explain only reports), and reports the
job's place in the pending order: its account's tier and Fair Tree values along the path, its
within-team score broken into signals (``core.priority.Scorer``, the scorer the pass uses), and
what the pass decided about it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.priority import Scorer
from allotment.errors import UsageError
from allotment.sim.overrides import apply_overrides
from allotment.sim.runner import _Sim, check_run
from allotment.traces.scenarios.workload import Workload


def explain(
    config: CompiledConfig,
    workload: Workload,
    job_id: str,
    *,
    cluster: str,
    at: float | None = None,
    policy: str = "budgets",
    overrides: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec = next((j for j in workload.jobs if j.id == job_id), None)
    if spec is None:
        raise UsageError(f"job {job_id!r} is not in the workload")
    check_run(config, cluster, policy)
    pol = apply_overrides(config.policy_for(cluster), overrides or {})
    ctx = build_context(config, cluster, mode=policy, policy=pol)
    tick = float(pol.reconcile_interval_s)
    when = at if at is not None else (math.ceil(spec.submit / tick) * tick if tick > 0 else spec.submit)
    sim = _Sim(config, cluster, workload, when / 86400.0 + 1e-9, ctx)
    sim.run()
    sched = sim.sched
    usage = sim.usage_at(when)
    d = sched.run_pass(when, usage)
    order = sched.order(when, usage)
    report: dict[str, Any] = {"job": job_id, "account": spec.account, "time": when, "policy": policy}
    ent = ctx.entitlement_gpus.get(spec.account, 0.0)
    report["account_status"] = {
        "entitlement_gpus": round(ent, 3),
        "running_allocated_gpus": sched.acct.alloc_gpus.get(spec.account, 0),
        "window_usage_gpu_hours": round(usage.get(spec.account, 0.0), 3),
        "path": list(ctx.paths.get(spec.account, ())),
    }
    started = next((s for s in d.starts if s.job_id == job_id), None)
    ranked = next((r for r in order if r.job_id == job_id), None)
    if started is not None:
        report["state"] = "started"
        report["decision"] = {"placement": [list(p) for p in started.placement], "reason": started.reason}
    elif ranked is not None:
        p = sched.pending[job_id]
        report["state"] = "pending"
        pi = sched.inputs(when, usage)
        parts = Scorer(ctx, pi.t, pi.load, sched.pool.max_free(), sched.acct.user_gpus, pi.boosts).parts(p)
        report["decision"] = {
            "position": ranked.position,
            "of": len(order),
            "tier": ranked.tier,
            "level_fair_share": [round(x, 4) for x in ranked.fair_share],
            "priority": {k: round(getattr(parts, k), 4) for k in ("total", "declared", "deadline", "age", "fairness", "fit", "boost")},
            "reason": ranked.reason,
        }
        res = next((r for r in d.reservations if r.job_id == job_id), None)
        if res is not None:
            report["reservation"] = {"nodes": list(res.nodes), "at": res.at, "reason": res.reason}
    elif job_id in sched.running:
        r = sched.running[job_id]
        report["state"] = "running"
        report["decision"] = {"since": r.start, "protected_until": r.protected_until, "allocated": r.allocated}
    elif spec.submit > when:
        report["state"] = "not yet submitted"
    elif job_id in sim.waiting_on:
        report["state"] = "waiting for dependencies"
        report["decision"] = {"depends_on": sorted(sim.waiting_on[job_id])}
    else:
        report["state"] = "finished"
    report["fair_tree"] = [
        {"leaf": r.leaf, "rank": r.rank, "level_fair_share": [round(x, 4) for x in r.level_fair_share]}
        for r in sched.ranks
    ]
    return report
