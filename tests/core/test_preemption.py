"""Victim choice: the order of the classes, least lost work, hysteresis, the distance rule,
anti-thrash and non-resumable work (core.preemption)."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.decisions import Decisions
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from tests.core.builders import make_config

NODES = (NodeState("n000", 8), NodeState("n001", 8))


def _job(i: str, account: str, gpus: int, *, mr: float = 600, prio: int = 0, resumable: bool = True,
         ckpt: float | None = None) -> JobSpec:
    return JobSpec(id=i, submit=0.0, account=account, gpus=gpus, work=36000, min_runtime=mr, priority=prio,
                   resumable=resumable, checkpoint_interval=ckpt, user="u")


def _run(spec: JobSpec, node: str, start: float = 0.0, *, evicted_by: str | None = None) -> RunningJob:
    allocated = spec.min_runtime != 0
    return RunningJob(spec, start, ((node, spec.gpus),), allocated, start + (spec.min_runtime or 0), 0.0, evicted_by)


def _decide(running: tuple[RunningJob, ...], pending: tuple[PendingJob, ...], usage: dict[str, float],
            now: float = 5000.0, **pol: object) -> Decisions:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(**pol)), "c1")  # type: ignore[arg-type]
    return decide(Snapshot(NODES, running, pending, usage), ctx, now)


def test_unallocated_work_goes_before_any_allocated_victim() -> None:
    running = (_run(_job("over", "a", 8), "n000"), _run(_job("free", "a", 8, mr=0), "n001"))
    d = _decide(running, (PendingJob(_job("p", "b", 8), 0.0, 0.0),), {"a": 20.0})
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("free", "unallocated")]


def test_among_reclaim_victims_the_least_lost_work_goes_first() -> None:
    # both a's jobs ran 6000 s; the one checkpointed every 1000 s loses nothing, the other 1800 s
    # (lost work is read at the epoch: 6000 s is a multiple of the 300 s period)
    running = (_run(_job("ck", "a", 8, ckpt=1000.0), "n000"), _run(_job("odd", "a", 8, ckpt=4200.0), "n001"))
    d = _decide(running, (PendingJob(_job("p", "b", 8), 0.0, 0.0),), {"a": 40.0}, now=6000.0)
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("ck", "reclaim")]
    assert d.preemptions[0].lost_work == 0.0


def test_no_reclaim_without_the_hysteresis_margin() -> None:
    running = (_run(_job("r1", "a", 8), "n000"), _run(_job("r2", "a", 8), "n001"))
    pend = (PendingJob(_job("p", "b", 8), 0.0, 0.0),)
    # measures: a 10.5 / 8, b 10 / 8 -> a is served only 5 % more: below the 10 % margin
    assert _decide(running, pend, {"a": 10.5, "b": 10.0}).preemptions == ()
    assert _decide(running, pend, {"a": 10.5, "b": 10.0}, reclaim_hysteresis=0.01).preemptions != ()


def test_a_reclaim_must_lower_the_distance_from_entitlements() -> None:
    # a runs 8 (owed 8): taking its job for b would only move the imbalance, never reduce it
    running = (_run(_job("r1", "a", 8), "n000"),)
    busy = (_run(_job("r2", "b", 8, mr=36000), "n001"),)
    d = _decide(running + busy, (PendingJob(_job("p", "b", 8), 0.0, 0.0),), {"a": 40.0})
    assert d.preemptions == ()


def test_a_requeued_job_does_not_evict_its_evictor_without_twice_the_margin() -> None:
    running = (_run(_job("r1", "a", 8), "n000"), _run(_job("r2", "a", 8), "n001", evicted_by=None))
    pend = (PendingJob(_job("p", "b", 8), 0.0, 0.0, 0.0, evicted_by="r1"),)
    # a is served 15 % more than b: enough for a reclaim, not for one straight back at r1
    d = _decide(running, pend, {"a": 11.5, "b": 10.0})
    assert [p.job_id for p in d.preemptions] == ["r2"]


def test_non_resumable_jobs_are_never_victims_under_run_to_completion() -> None:
    running = (_run(_job("r1", "a", 8, resumable=False), "n000"), _run(_job("r2", "a", 8, resumable=False), "n001"))
    pend = (PendingJob(_job("p", "b", 8), 0.0, 0.0),)
    assert _decide(running, pend, {"a": 40.0}, non_resumable="run_to_completion").preemptions == ()
    assert _decide(running, pend, {"a": 40.0}).preemptions != ()


def test_within_team_slicing_takes_lower_priority_work_of_the_same_team() -> None:
    running = (_run(_job("low", "a", 8, prio=0), "n000"), _run(_job("b1", "b", 8, mr=36000), "n001"))
    d = _decide(running, (PendingJob(_job("hi", "a", 4, prio=1), 0.0, 0.0),), {"a": 0.0, "b": 0.0})
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("low", "within-team")]
    assert [s.job_id for s in d.starts] == ["hi"]


def test_the_distance_check_counts_a_victim_that_yields_to_a_reservation_too() -> None:
    # a is owed 16 and runs 8; b is owed 16 and runs 24 (y, r, k: 8 each).  A 16-GPU gang of a
    # taking y (it yields to the reservation) and r (a reclaim) leaves a at 24 and b at 8: the
    # summed distance stays 16 (8 + 8 -> 8 + 8), so the reclaim is refused.  Leaving y out of the
    # sums counted b at 16 and let it through (16 -> 8).  y alone, yielding, needs no check.
    from allotment.core.decide import build_scheduler
    from allotment.core.preemption.victims import _lowers_distance
    from allotment.core.preemption.view import VictimView

    nodes = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=4), "c1")
    running = (_run(_job("y", "b", 8), "n000"), _run(_job("r", "b", 8), "n001"), _run(_job("k", "b", 8), "n002"),
               _run(_job("x", "a", 8), "n003"))
    sched = build_scheduler(Snapshot(nodes, running), ctx, 0.0, frozenset())
    view = VictimView(sched.state.pool, sched.state.running, sched.state.acct, False, 0.1, True, 0.0)
    owed = {"a": 16.0, "b": 16.0}
    assert not _lowers_distance(view, "a", 16, ["y", "r"], owed, {"y"})
    assert _lowers_distance(view, "a", 16, ["y"], owed, {"y"})  # the reservation's terms: no check
    assert _lowers_distance(view, "a", 8, ["r"], owed, set())  # one reclaim alone: 16 -> 0
