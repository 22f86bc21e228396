"""Hypothesis strategies: small random clusters and workloads for the simulator's invariants."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Boost, CompiledConfig, Policy
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


@st.composite
def clusters(draw: st.DrawFn) -> CompiledConfig:
    n_teams = draw(st.integers(1, 4))
    weights = {f"t{i}": draw(st.integers(1, 4)) for i in range(n_teams)}
    tree: dict[str, Any] = dict(weights)
    if n_teams >= 3 and draw(st.booleans()):
        tree = {"g": {"t0": weights["t0"], "t1": weights["t1"]}, **{k: v for k, v in weights.items() if k not in ("t0", "t1")}}
    n_nodes = draw(st.integers(1, 4))
    policy = Policy(
        lookback_s=draw(st.sampled_from([3600, 6 * 3600, 86400])),
        min_runtime_cap_s=draw(st.sampled_from([600, 3600, 4 * 3600])),
        default_min_runtime_s=600,
        non_resumable=draw(st.sampled_from(["requeue", "run_to_completion"])),
        reconcile_interval_s=draw(st.sampled_from([0, 10])),
        human_drain_threshold_s=1800,
        fairshare_period_s=draw(st.sampled_from([60, 300])),
        reservations=draw(st.sampled_from([1, 1, 2, 4])),
        debug_reclaim=draw(st.booleans()),
        consolidate=draw(st.booleans()),  # moves resumable work to free a node (core.consolidation)
        # a reservation kept by its holder, debug jobs let through to its first plan + threshold
        keep_hold=draw(st.sampled_from(["off", "off", "all", "gangs"])),
        keep_hold_min_fraction=draw(st.sampled_from([0.0, 0.0, 0.25, 0.5])),  # kept only for the larger gangs
        kept_hold_debug=draw(st.booleans()),
        hand_over=draw(st.sampled_from(["off", "sooner", "claim", "both"])),  # a hold's hand-over (core.hand_over; keep_hold off)
        debug_over_cap=draw(st.sampled_from([0, 0, 2, 8])),  # short debug jobs beyond a cap (core.debug_overdraft)
        debug_over_cap_admits=draw(st.sampled_from(["work", "protection"])),  # or any debug job, which yields
        hold_evicts=draw(st.sampled_from(["off", "off", "all", "gangs", "borrowed"])),  # resumable work yields to holds past protection
        spare_gangs=draw(st.sampled_from(["off", "class", "first", "wait"])),  # victim choice spares larger gangs (gang_sparing)
        # sessions told before they are stopped, sometimes restored (core.session_grace)
        # and sometimes a pool of nodes for them, lent to other work while idle (core.session_pool)
        interactive=dataclasses.replace(
            draw(st.sampled_from([InteractiveClass(), InteractiveClass(grace_s=300),
                                  InteractiveClass(grace_s=120, restore_hook="restore")])),
            pool_nodes=min(n_nodes - 1, draw(st.sampled_from([0, 0, 1, 2])))),  # a pool leaves a node
        boosts=draw(st.sampled_from([(), (), (_boost("user:u1", 2.0, 3600),), (_boost("account:t0", 1.0, 7200),)])),
    )
    # sometimes a max_gpus cap on a team or on a group (capped teams slice their own time)
    caps = draw(st.sampled_from([{}, {}, {"t0": 2}, {"t0": 4}, {"t0": 8}] + ([{"g": 4}] if "g" in tree else [])))
    return make_config(
        tree,
        nodes=n_nodes,
        gpus_per_node=draw(st.sampled_from([2, 4, 8])),
        policy=policy,
        max_gpus=caps,
    )


def _boost(target: str, amount: float, until_s: int) -> Boost:
    """A boost that expires ``until_s`` seconds after t = 0 (make_config's date, midnight UTC)."""
    expires = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=until_s)
    return Boost(target, amount, expires, "test", "@ops")


@st.composite
def workloads(draw: st.DrawFn, config: CompiledConfig) -> Workload:
    cl = next(iter(config.clusters.values()))
    gpn = cl.node_groups[0].gpus_per_node
    n_nodes = len(cl.node_names)
    teams = [n.name for n in config.leaves()]
    jobs = []
    for i in range(draw(st.integers(1, 25))):
        whole = draw(st.booleans()) and n_nodes > 1
        gpus = gpn * draw(st.integers(2, n_nodes)) if whole else draw(st.integers(1, gpn))
        resumable = draw(st.booleans())
        jobs.append(
            JobSpec(
                id=f"j{i:03d}",
                submit=float(draw(st.integers(0, 4 * 3600))),
                account=draw(st.sampled_from(teams)),
                gpus=gpus,
                work=float(draw(st.integers(60, 6 * 3600))),
                user=draw(st.sampled_from(["u1", "u2", "u3"])),
                gpus_per_node=gpn if whole else None,
                min_runtime=float(draw(st.sampled_from([0, 0, 300, 1800, 7200]))),
                resumable=resumable,
                checkpoint_interval=draw(st.sampled_from([None, 600.0])) if resumable else None,
                priority=draw(st.integers(0, 2)),
                kind=draw(st.sampled_from(["debug", "train", "batch", "interactive"])),
                deadline=draw(st.sampled_from([None, None, float(draw(st.integers(600, 8 * 3600)))])),
            )
        )
    # sometimes a burst of debug jobs of one team and one declared priority, beside that team's
    # longer work of the same priority (debug slicing, core.preemption.debug_slice)
    if draw(st.booleans()):
        prio = draw(st.integers(0, 2))
        at = draw(st.integers(0, 3 * 3600))
        jobs.append(JobSpec(id="long", submit=float(at), account=teams[0], gpus=draw(st.integers(1, gpn)),
                            work=float(draw(st.integers(3600, 6 * 3600))), user="u1", min_runtime=300.0,
                            priority=prio, kind="batch"))
        for k in range(draw(st.integers(1, 5))):
            jobs.append(JobSpec(id=f"d{k:03d}", submit=float(at + draw(st.integers(0, 3600))), account=teams[0],
                                gpus=draw(st.integers(1, gpn)), work=float(draw(st.integers(120, 1800))),
                                user=draw(st.sampled_from(["u1", "u2"])), min_runtime=300.0,
                                resumable=draw(st.booleans()), priority=prio, kind="debug"))
    # dependencies only on earlier ids, so they cannot form a cycle; most within one team (only
    # those lend urgency and raise declared priorities), the dependant submitted before or after
    # its prerequisite (the scheduler knows a job from its submission: sim/known_dependencies.py)
    if len(jobs) > 2 and draw(st.booleans()):
        for _ in range(draw(st.integers(1, 4))):
            k = draw(st.integers(1, len(jobs) - 1))
            d = draw(st.integers(0, k - 1))
            j = jobs[k]
            fields = {f.name: getattr(j, f.name) for f in dataclasses.fields(j)}
            if jobs[d].id not in j.depends_on:
                fields["depends_on"] = (*j.depends_on, jobs[d].id)
            if draw(st.integers(0, 3)):
                fields["account"] = jobs[d].account
            jobs[k] = JobSpec(**fields)
    events = []
    for _ in range(draw(st.integers(0, 3))):
        node = draw(st.sampled_from(cl.node_names))
        t = float(draw(st.integers(0, 4 * 3600)))
        events.append(NodeEvent(t, node, "unhealthy"))
        events.append(NodeEvent(t + draw(st.integers(60, 4 * 3600)), node, "healthy"))
    return Workload.of(jobs, events)
