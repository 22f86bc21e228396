"""Debug slicing (core.preemption.debug_slice): a blocked debug job takes the place of its own
team's work of the same declared priority that is past its protection and would end after it.
Two teams at 50/50 on one or two 8-GPU nodes, run through the simulator (passes every 10 s)."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0, prio: int = 0,
         resumable: bool = True) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, priority=prio,
                   user="u", resumable=resumable)


def _run(jobs: list[JobSpec], *, nodes: int = 2, max_gpus: dict[str, int] | None = None, **pol: object) -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, max_gpus=max_gpus, policy=Policy(**pol))  # type: ignore[arg-type]
    return simulate(config, Workload.of(jobs, ()))


def _starts(res: SimResult, job: str) -> list[float]:
    return [e.t for e in res.events if e.event == "start" and e.job == job]


def _preempts(res: SimResult) -> list[tuple[str, str | None, str | None]]:
    return [(e.job, e.by, e.rule) for e in res.events if e.event == "preempt"]


def test_a_debug_job_at_its_teams_ceiling_takes_the_place_of_same_priority_work_that_ends_later() -> None:
    # a's ceiling is 8 GPUs and its 10 h job holds them; n001 is idle but a may not use it.  The
    # debug job d (same priority 0, 5 min protection) starts when the long job's protection ends
    # (600 s), not after 10 h
    jobs = [_job("long", "a", 8, 0.0, 10 * HOUR), _job("d", "a", 4, 100.0, 900.0, mr=300.0)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _starts(res, "d")[0] <= 610.0
    assert _preempts(res) == [("long", "d", "debug-slice")]


def test_a_blocked_debug_job_of_a_borrowing_team_slices_its_same_priority_work_without_a_ceiling() -> None:
    # one node, a's 10 h job fills it (a borrows: it is owed 4); no other team waits
    jobs = [_job("long", "a", 8, 0.0, 10 * HOUR), _job("d", "a", 8, 100.0, 900.0, mr=300.0)]
    res = _run(jobs, nodes=1)
    assert _starts(res, "d")[0] <= 610.0
    assert _preempts(res) == [("long", "d", "debug-slice")]


def test_a_debug_job_does_not_take_the_place_of_work_that_would_end_before_it() -> None:
    # the running job ends at 1,500 s; the debug job would end at 600 + 1,200 s: it waits
    jobs = [_job("short", "a", 8, 0.0, 1500.0), _job("d", "a", 4, 100.0, 1200.0, mr=300.0)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _preempts(res) == []
    assert _starts(res, "d")[0] == 1500.0


def test_a_debug_job_never_takes_the_place_of_higher_priority_work_of_its_team() -> None:
    # priority 1 work would take the debug job's place straight back by within-team slicing
    jobs = [_job("long", "a", 8, 0.0, 2 * HOUR, prio=1), _job("d", "a", 4, 100.0, 900.0, mr=300.0)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _preempts(res) == []
    assert _starts(res, "d")[0] == 2 * HOUR


def test_a_debug_job_never_takes_protected_work_nor_a_job_that_is_not_its_teams() -> None:
    # b's 10 h job on n001 is past its protection and b borrows nothing, a's job on n000 is
    # protected for 1 h: the debug job waits for that protection, then slices its own team
    jobs = [_job("mine", "a", 8, 0.0, 10 * HOUR, mr=HOUR), _job("theirs", "b", 8, 0.0, 10 * HOUR),
            _job("d", "a", 8, 100.0, 900.0, mr=300.0)]
    res = _run(jobs)
    assert _starts(res, "d")[0] == HOUR
    assert _preempts(res) == [("mine", "d", "debug-slice")]


def test_a_job_a_debug_job_evicted_never_evicts_it_back() -> None:
    # d1 (a debug job with 30 min of work) is past its protection at 400 s when d2 (10 min)
    # arrives; d2 takes its place.  Requeued, d1 would end after d2 from any moment on, so once
    # d2's protection ends it still may not take d2's place: one eviction, d1 runs when d2 ends
    jobs = [_job("d1", "a", 8, 0.0, 1800.0, mr=300.0, resumable=False),
            _job("d2", "a", 8, 400.0, 600.0, mr=300.0, resumable=False)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _preempts(res) == [("d1", "d2", "debug-slice")]
    assert _starts(res, "d1") == [0.0, _starts(res, "d2")[0] + 600.0]


def test_a_job_that_is_not_a_debug_job_never_slices_same_priority_work() -> None:
    # a 30 min protection is above the 15 min debug threshold
    jobs = [_job("long", "a", 8, 0.0, 10 * HOUR), _job("d", "a", 4, 100.0, 900.0, mr=1800.0)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _preempts(res) == []


def test_baselines_never_slice_for_debug_jobs() -> None:
    jobs = [_job("long", "a", 8, 0.0, 10 * HOUR), _job("d", "a", 8, 100.0, 900.0, mr=300.0)]
    config = make_config({"a": 1, "b": 1}, nodes=1)
    for mode in ("priority", "fifo"):
        res = simulate(config, Workload.of(jobs, ()), policy=mode)
        assert not [e for e in res.events if e.event == "preempt"]


def test_a_job_evicted_by_a_debug_job_may_be_taken_again_by_a_shorter_one() -> None:
    # d1 (30 min, resumable: it keeps its progress) loses its place to d2 at 400 s and runs again
    # from 1,000 s; d3 (10 min) arrives at 1,400 s, when d1 is past its protection again and
    # would end after it: d3 takes its place too (shortest work first; see the design note)
    jobs = [_job("d1", "a", 8, 0.0, 1800.0, mr=300.0),
            _job("d2", "a", 8, 400.0, 600.0, mr=300.0),
            _job("d3", "a", 8, 1400.0, 600.0, mr=300.0)]
    res = _run(jobs, max_gpus={"a": 8})
    assert _preempts(res) == [("d1", "d2", "debug-slice"), ("d1", "d3", "debug-slice")]
    assert _starts(res, "d3") == [1400.0]


def test_a_non_resumable_job_is_thrown_away_by_debug_slicing_at_most_once() -> None:
    # a's ceiling is 8 GPUs; its non-resumable 40-minute job nr holds them, and a stream of its
    # debug jobs (4 GPUs, 5 min protection, 10 min of work) arrives every 5 minutes.  The first may
    # take nr's place; nr, requeued, restarts from zero and is never thrown away by the stream again
    # (before: evicted over and over, each time losing everything it ran).
    stream = [_job(f"d{i}", "a", 4, 100.0 + 300.0 * i, 600.0, mr=300.0) for i in range(40)]
    res = _run([_job("nr", "a", 8, 0.0, 2400.0, resumable=False), *stream], max_gpus={"a": 8})
    assert [(j, rule) for j, _, rule in _preempts(res) if j == "nr"] == [("nr", "debug-slice")]


def test_a_debug_job_does_not_take_the_place_of_work_it_would_leave_mostly_idle() -> None:
    # a's 10 h, 8-GPU run fills its ceiling; a 1-GPU debug job taking its place would leave 7 of
    # the node's 8 GPUs idle while the run waits to restart: it waits for the run instead.  A
    # 4-GPU debug job leaves half the node to the run's team: it may (the first test above).
    res = _run([_job("long", "a", 8, 0.0, 10 * HOUR), _job("d", "a", 1, 100.0, 900.0, mr=300.0)], max_gpus={"a": 8})
    assert _preempts(res) == []
