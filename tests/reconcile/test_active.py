"""Active mode against the simulated backend: the core's decisions reach the cluster as
requeues, priorities, drains and resumes, and the minimum-runtime contract is never broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.backends.actions import DRAIN_PREFIX
from allotment.backends.protocol import JobObs, NodeObs, Observation
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.active import plan_cluster
from allotment.reconcile.pinned_order import PINNED_FLOOR, PRIORITY_TOP
from allotment.reconcile.reconciler import Options
from tests.backends.configs import tree_config
from tests.reconcile.conftest import T0


def _setup(make_reconciler: Any, **kw: Any) -> Any:
    rec = make_reconciler(Options(tiers_s=(20,), **kw))
    rec.tick()  # policy in place
    return rec


def test_unhealthy_node_is_drained_emptied_after_min_runtime_and_resumed(
    make_reconciler: Any, sim: SimulatedBackend, tmp_path: Path
) -> None:
    health = tmp_path / "health.txt"
    rec = _setup(make_reconciler, health_file=str(health))
    protected = sim.submit("teama1", 8, qos="alloc-20s")
    assert sim.observe().job(protected).nodes == ("n1",)  # type: ignore[union-attr]
    health.write_text("n1 unhealthy  GPU 3 fell off the bus\n")
    rec.clock.t = sim.state.now = T0 + 5
    result = rec.tick()
    assert [(r.action.kind, r.action.target) for r in result.results if r.code == "applied"] == [
        ("drain", "n1")
    ]
    assert sim.observe().job(protected).state == "running"  # type: ignore[union-attr]
    assert sim.state.nodes["n1"].reason == f"{DRAIN_PREFIX} GPU 3 fell off the bus"
    # once its minimum runtime is over it leaves the node
    rec.clock.t = sim.state.now = T0 + 25
    result = rec.tick()
    assert ("requeue", protected) in [(r.action.kind, r.action.target) for r in result.results]
    assert all("n1" not in j.nodes for j in sim.observe().running())
    health.write_text("n1 healthy\n")
    result = rec.tick()
    assert ("resume", "n1") in [(r.action.kind, r.action.target) for r in result.results]
    assert not sim.state.nodes["n1"].drain


def test_a_node_drained_by_a_person_is_never_resumed(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = _setup(make_reconciler)
    sim.state.nodes["n2"].drain, sim.state.nodes["n2"].reason = True, "hardware swap by ops"
    result = rec.tick()
    assert all(r.action.target != "n2" for r in result.results)
    assert sim.state.nodes["n2"].drain


def test_allocated_usage_goes_to_the_ledger_and_unallocated_does_not(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = _setup(make_reconciler)
    sim.submit("teama1", 4, qos="alloc-20s")
    sim.submit("teamb", 4, qos="unallocated")
    rec.clock.t = sim.state.now = T0 + 1800
    rec.tick()
    rec.tick()  # the same observation again adds nothing
    usage = rec.ledger.usage(T0 + 1800, 7 * 86400)
    assert usage == {"teama1": 2.0}


def test_over_served_job_past_min_runtime_is_requeued_for_an_under_served_one(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = _setup(make_reconciler)
    hogs = [sim.submit("teamb", 8, qos="alloc-20s") for _ in range(4)]
    rec.clock.t = sim.state.now = T0 + 3 * 3600  # teamb used 96 GPU-hours, far over its share
    rec.tick()
    waiting = sim.submit("teama1", 8, qos="alloc-20s")
    result = rec.tick()
    requeued = [
        r.action.target
        for r in result.results
        if r.action.kind == "requeue" and r.code == "applied"
    ]
    assert len(requeued) == 1 and requeued[0] in hogs
    sim.advance(12)  # the requeue delay passes; the freed node goes to the waiting job first
    rec.clock.t = sim.state.now
    rec.tick()
    assert sim.observe().job(waiting).state == "running"  # type: ignore[union-attr]


def test_a_job_inside_its_minimum_runtime_is_never_touched(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = _setup(make_reconciler)
    young = [sim.submit("teamb", 8, qos="alloc-20s") for _ in range(4)]
    rec.ledger.record([])
    rec.clock.t = sim.state.now = T0 + 10  # inside the 20 s minimum runtime
    sim.submit("teama1", 8, qos="alloc-20s")
    result = rec.tick()
    assert not [
        r
        for r in result.results
        if r.action.kind in ("requeue", "cancel") and r.action.target in young
    ]


# ---------------------------------------------------------------------- property: the guard --
CONFIG = tree_config()
_job = st.tuples(
    st.sampled_from(["teama1", "teama2", "teamb"]),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([0, 20, 3600, None]),
    st.floats(min_value=0, max_value=7200),
    st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(_job, min_size=1, max_size=12),
    usage=st.dictionaries(st.sampled_from(["teama1", "teama2", "teamb"]), st.floats(0, 500)),
    sick=st.sets(st.sampled_from(["n1", "n2", "n3", "n4"])),
)
def test_no_requeue_ever_targets_a_job_inside_its_minimum_runtime(
    jobs: list[tuple[str, int, int | None, float, bool]], usage: dict[str, float], sick: set[str]
) -> None:
    now = T0 + 10_000
    free = {f"n{i}": 8 for i in range(1, 5)}
    obs_jobs = []
    for i, (acct, gpus, mr, age, running) in enumerate(jobs, start=1):
        node = next((n for n, g in free.items() if g >= gpus), None) if running else None
        if node is not None:
            free[node] -= gpus
            obs_jobs.append(
                JobObs(
                    str(i),
                    "root",
                    acct,
                    "q",
                    gpus,
                    "running",
                    now - age - 1,
                    now - age,
                    mr,
                    True,
                    0,
                    (node,),
                )
            )
        else:
            obs_jobs.append(
                JobObs(str(i), "root", acct, "q", gpus, "pending", now - age, None, mr, True, 1)
            )
    nodes = tuple(NodeObs(n, 8, 8 - g) for n, g in free.items())
    obs = Observation(now, nodes, tuple(obs_jobs))
    plan = plan_cluster(obs, CONFIG, "gpulab", usage, {n: "sick" for n in sick})
    cap, default = CONFIG.policy.min_runtime_cap_s, CONFIG.policy.default_min_runtime_s
    for a in plan.actions:
        if a.kind in ("requeue", "cancel"):
            j = obs.job(a.target)
            assert j is not None and j.start is not None
            declared = default if j.min_runtime_s is None else j.min_runtime_s
            assert now >= j.start + min(declared, cap)
    assert (
        plan.actions
        == plan_cluster(obs, CONFIG, "gpulab", usage, {n: "sick" for n in sick}).actions
    )


def test_only_the_head_of_the_order_is_pinned_and_earlier_pins_follow_their_position() -> None:
    now = T0
    pend = [
        JobObs(str(i), "root", "teama1", "q", 8, "pending", now - 1000 + i, None, 20, True, 1)
        for i in range(1, 21)
    ]
    pend[-1] = JobObs(
        "20", "root", "teama1", "q", 8, "pending", now - 980, None, 20, True, PRIORITY_TOP
    )  # pinned before, at the very top
    full = [
        JobObs(
            str(100 + i),
            "root",
            "teamb",
            "q",
            8,
            "running",
            now - 50,
            now - 10,
            20,
            True,
            0,
            (f"n{i}",),
        )
        for i in range(1, 5)
    ]
    obs = Observation(now, tuple(NodeObs(f"n{i}", 8, 8) for i in range(1, 5)), tuple(pend + full))
    plan = plan_cluster(obs, CONFIG, "gpulab", {}, {}, ordered=5)
    prio = {a.target: a.value for a in plan.actions if a.kind == "set_priority"}
    positions = {r.job_id: r.position for r in plan.decisions.order}
    head = {j for j, p in positions.items() if p < 5}
    assert set(prio) == head | {"20"}
    by_position = sorted(prio, key=lambda j: positions[j])
    values = [prio[j] for j in by_position]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    assert all(PINNED_FLOOR < v <= PRIORITY_TOP for v in values)


def test_a_jobs_declared_priority_and_deadline_reach_the_core() -> None:
    """Issue 28, item 3: on a real cluster, urgency and declared priority order a team's jobs as
    in the simulator (before, every observed job was priority 0 without a deadline)."""
    from allotment.reconcile.active import _spec

    j = JobObs("7", "root", "teama1", "q", 8, "pending", 100.0, None, 20, True, 40,
               declared_priority=3, deadline=9000.0)
    s = _spec(j)
    assert (s.priority, s.deadline) == (3, 9000.0)


def test_a_job_waiting_on_a_dependency_lends_its_priority_to_its_prerequisite() -> None:
    """Issue 28, item 3: a job Slurm holds for its ``--dependency`` is not queued, but the core
    knows it (``Snapshot.waiting``), so its declared priority reaches its prerequisite as in the
    simulator: the prerequisite starts before its team's older job of the same priority (before,
    the waiting job was dropped and the older job started)."""
    now = 10_000.0
    old = JobObs("1", "root", "teama1", "q", 8, "pending", now - 500, None, 20, True, 1)
    pre = JobObs("2", "root", "teama1", "q", 8, "pending", now - 400, None, 20, True, 1, time_limit_s=600.0)
    then = JobObs("3", "root", "teama1", "q", 8, "pending", now - 400, None, 20, True, 1, reason="Dependency",
                  declared_priority=10, depends_on=("2",), time_limit_s=36_000.0)
    busy = [JobObs(str(100 + i), "root", "teamb", "q", 8, "running", now - 50, now - 10, 20, True, 0, (f"n{i}",))
            for i in range(2, 5)]
    obs = Observation(now, tuple(NodeObs(f"n{i}", 8, 8 if i > 1 else 0) for i in range(1, 5)),
                      (old, pre, then, *busy))
    plan = plan_cluster(obs, CONFIG, "gpulab", {}, {})
    assert [s.job_id for s in plan.decisions.starts] == ["2"]
    assert "3" not in {r.job_id for r in plan.decisions.order}  # known, never queued


def test_on_kubernetes_a_job_waits_while_a_job_it_names_is_still_there() -> None:
    """Kubernetes enforces no dependency (no ``Dependency`` reason): a job whose
    ``allotment.dev/depends-on`` names a job still pending or running is not started, and one
    whose prerequisites are gone (ended) is queued."""
    now = 10_000.0
    pre = JobObs("ml/pre", "root", "teama1", "q", 8, "pending", now - 400, None, 20, True, 1)
    then = JobObs("ml/then", "root", "teama1", "q", 8, "pending", now - 500, None, 20, True, 1,
                  declared_priority=10, depends_on=("ml/pre",))
    nodes = tuple(NodeObs(f"n{i}", 8, 0) for i in range(1, 5))
    plan = plan_cluster(Observation(now, nodes, (pre, then)), CONFIG, "gpulab", {}, {})
    assert [s.job_id for s in plan.decisions.starts] == ["ml/pre"]
    plan = plan_cluster(Observation(now, nodes, (then,)), CONFIG, "gpulab", {}, {})
    assert [s.job_id for s in plan.decisions.starts] == ["ml/then"]


def test_a_session_takes_lent_pool_gpus_back_inside_the_borrowers_minimum_runtime() -> None:
    """Issue 29, the dedicated pool: a job on the pool's idle GPUs is lent and has no protection
    (``core.session_pool``, rule 2), so the guard requeues it for a waiting session at once.
    Before, the guard held it to its tier's minimum runtime whatever the core said, and on a
    real Slurm the session waited the borrower's tier out (tests/slurm/test_session_pool_slurm.py)."""
    from dataclasses import replace

    from allotment.compile.interactive import InteractiveClass
    from allotment.compile.model import Policy

    config = tree_config(policy=replace(Policy(), interactive=InteractiveClass(pool_nodes=1)))
    now = T0 + 10_000
    busy = [JobObs(str(100 + i), "root", "teama2", "q", 8, "running", now - 50, now - 10, 20, True, 0, (f"n{i}",))
            for i in range(1, 4)]
    borrower = JobObs("7", "root", "teama1", "q", 8, "running", now - 20, now - 5, 20, True, 0, ("n4",))
    session = JobObs("8", "root", "teamb", "q", 4, "pending", now - 1, None, 20, True, 1, kind="interactive")
    obs = Observation(now, tuple(NodeObs(f"n{i}", 8, 0) for i in range(1, 5)), (*busy, borrower, session))
    plan = plan_cluster(obs, config, "gpulab", {}, {})
    assert [(a.kind, a.target, a.rule) for a in plan.actions if a.kind in ("requeue", "cancel")] == [
        ("requeue", "7", "session-pool")
    ]
