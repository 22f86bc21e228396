"""``Policy.consolidate`` (``core.consolidation``): a blocked job whose GPUs are free in all but
not on one node starts at once by moving resumable work past its protection into the other
holes; the moved job runs again in the same pass, from its last checkpoint."""

from __future__ import annotations

import random

from allotment.compile.model import Policy
from allotment.core.consolidation import plan_consolidation
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.snapshot import NodeState
from allotment.core.state import Run
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.core.fragmenting import fragmenting_case

HOUR = 3600.0


def _run(consolidate: bool, *, resumable: bool = True, p_gpus: int = 4) -> SimResult:
    # two 8-GPU nodes, all of team a's work at one priority, so nothing is a victim of
    # another rule.  At 0: A (4 GPUs, not resumable) and then B (2 GPUs, resumable,
    # checkpoint every 600 s, protected 600 s) go on n000 by best fit, C (6 GPUs, not
    # resumable) on n001: 2 GPUs free on each node, all running for a day.  At 1,000 s a
    # 4-GPU job P arrives (protected an hour: no debug job, which may slice its own team): 4
    # GPUs are free in all, on no one node.
    jobs = [
        JobSpec(id="A", submit=0.0, account="a", gpus=4, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="B", submit=1.0, account="a", gpus=2, work=24 * HOUR, min_runtime=600.0, user="u",
                resumable=resumable, checkpoint_interval=600.0 if resumable else None),
        JobSpec(id="C", submit=2.0, account="a", gpus=6, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="P", submit=1000.0, account="a", gpus=p_gpus, work=4 * HOUR, min_runtime=HOUR, user="u"),
    ]
    config = make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(consolidate=consolidate))
    return simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0)


def _starts(res: SimResult, job: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e.t, tuple(e.nodes or ())) for e in res.events if e.event == "start" and e.job == job]


def test_a_blocked_job_starts_at_once_by_moving_resumable_work_into_another_hole() -> None:
    # without the rule P waits for a natural end (a day)
    assert _starts(_run(False), "P")[0][0] >= 24 * HOUR
    res = _run(True)
    assert _starts(res, "P") == [(1000.0, ("n000",))]
    # B moved: preempted by the rule ``consolidate`` and started again at once on n001
    moved = [e for e in res.events if e.event == "preempt"]
    assert [(e.t, e.job, e.rule) for e in moved] == [(1000.0, "B", "consolidate")]
    assert _starts(res, "B") == [(10.0, ("n000",)), (1000.0, ("n001",))]
    # it kept its last checkpoint (600 s of the 990 it ran): 390 s x 2 GPUs thrown away
    assert abs(res.metrics["lost_gpu_hours"] - 390 * 2 / HOUR) < 1e-3


def test_work_that_is_not_resumable_is_never_moved() -> None:
    res = _run(True, resumable=False)
    assert _starts(res, "P")[0][0] >= 24 * HOUR
    assert not [e for e in res.events if e.event == "preempt"]


def _free_run(*, b_min_runtime: float, consolidate: bool = True, reference: bool = False) -> SimResult:
    # the case of ``_run`` with a blocked *unallocated* P (minimum runtime 0): A (4, not
    # resumable) and B (2, resumable, minimum runtime ``b_min_runtime``: 0 is free work) on
    # n000, C (6, not resumable, after B has started) on n001; at 1,000 s P wants 4 GPUs, free in all on no one node
    jobs = [
        JobSpec(id="A", submit=0.0, account="a", gpus=4, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="B", submit=1.0, account="b", gpus=2, work=24 * HOUR, min_runtime=b_min_runtime, user="u",
                checkpoint_interval=600.0),
        JobSpec(id="C", submit=20.0, account="a", gpus=6, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="P", submit=1000.0, account="b", gpus=4, work=4 * HOUR, min_runtime=0.0, user="u"),
    ]
    config = make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(consolidate=consolidate))
    return simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0, reference=reference)


def test_a_blocked_unallocated_job_starts_by_moving_unallocated_work() -> None:
    # free work waiting for a whole hole is what left b200 idle (docs/results.md): it starts
    # at once when the free work in its way can move to the other hole
    assert _starts(_free_run(b_min_runtime=0.0, consolidate=False), "P")[0][0] >= 24 * HOUR
    res = _free_run(b_min_runtime=0.0)
    assert _starts(res, "P") == [(1000.0, ("n000",))]
    assert [(e.t, e.job, e.rule) for e in res.events if e.event == "preempt"] == [(1000.0, "B", "consolidate")]
    assert _starts(res, "B")[-1] == (1000.0, ("n001",))


def test_an_unallocated_job_never_moves_allocated_work() -> None:
    # the same, B funded (past its 600 s protection): a funded team's progress is not thrown
    # away for work nobody pays for, so P waits for a natural end.  Both walks: the fast one
    # skips the queue when no free work runs (``walk._may_move_free_for``), the reference
    # visits it and must find no way
    for reference in (False, True):
        res = _free_run(b_min_runtime=600.0, reference=reference)
        assert _starts(res, "P")[0][0] >= 24 * HOUR
        assert not [e for e in res.events if e.event == "preempt"]


def _pool(jobs: dict[str, tuple[int, int, bool]]) -> tuple[NodePool, dict[str, Run]]:
    """Three 4-GPU nodes holding ``jobs``: id -> (node, GPUs, resumable)."""
    pool = NodePool(tuple(NodeState(f"n{i}", 4) for i in range(3)))
    running = {}
    for jid, (node, gpus, resumable) in jobs.items():
        spec = JobSpec(id=jid, submit=0.0, account="a", gpus=gpus, work=HOUR, user="u", resumable=resumable)
        running[jid] = Run(spec, 0.0, ((node, gpus),), True, 0.0, 0.0, 0, None)
        pool.allocate(jid, ((node, gpus),))
    return pool, running


def test_no_more_gpus_move_than_the_blocked_job_starts() -> None:
    # n0 holds two resumable 2-GPU jobs, n1 and n2 a 2-GPU job each that may not move: 4 GPUs
    # free in all, 2 per node.  A 3-GPU job could have n0 only by moving both (4 GPUs):
    # more restarting than starting, so no.  A 4-GPU job may: it starts as many as move.
    pool, running = _pool({"x1": (0, 2, True), "x2": (0, 2, True), "y": (1, 2, False), "z": (2, 2, False)})
    resumable = lambda r: r.resumable  # noqa: E731
    pre = [4, 2, 2]  # every running GPU counted as preemptible: the bound reads it
    assert plan_consolidation(pool, running, resumable, None, 3, None, frozenset(), 10.0, pre) is None
    got = plan_consolidation(pool, running, resumable, None, 4, None, frozenset(), 10.0, pre)
    assert got is not None and got.target == 0
    assert sorted((m.job_id, m.node) for m in got.moves) == [("x1", 1), ("x2", 2)]
    # a reserved node takes no moved job: with n2 closed, one hole is left, too few
    assert plan_consolidation(pool, running, resumable, None, 4, None, frozenset({2}), 10.0, pre) is None


def test_the_fragmenting_cases_of_the_walk_property_do_move_work() -> None:
    # the walk-equivalence and decide properties draw these cases
    # (tests/sim/test_walk_equivalence.py): they are worth something only if moves happen
    moves = 0
    for seed in range(20):
        config, workload = fragmenting_case(random.Random(seed))
        res = simulate(config, workload, keep_events=True, days=1.0)
        moves += sum(1 for e in res.events if e.event == "preempt" and e.rule == "consolidate")
    assert moves >= 5


def test_work_that_can_never_move_is_packed_beside_such_work_while_consolidation_is_on() -> None:
    # R (6 GPUs, resumable) on n000 leaves 2 free there; A (3 GPUs, not resumable) goes on
    # n001.  S (2 GPUs, not resumable): best fit is n000's exact hole; with consolidation on it
    # goes beside A, so n000 keeps only work a move can take off it
    def where(consolidate: bool) -> tuple[str, ...]:
        jobs = [
            JobSpec(id="R", submit=0.0, account="a", gpus=6, work=24 * HOUR, min_runtime=600.0, user="u",
                    checkpoint_interval=600.0),
            JobSpec(id="A", submit=1.0, account="a", gpus=3, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
            JobSpec(id="S", submit=2.0, account="a", gpus=2, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        ]
        config = make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(consolidate=consolidate))
        res = simulate(config, Workload.of(jobs, ()), keep_events=True, days=1.0)
        return _starts(res, "S")[0][1]

    assert where(False) == ("n000",)
    assert where(True) == ("n001",)
