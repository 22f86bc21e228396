"""The debug overdraft (``core.debug_overdraft``, ``Policy.debug_over_cap``): a team held at its
``max_gpus`` by its own *protected* work may still start short debug jobs, up to
``debug_over_cap`` GPUs beyond the cap; nothing else passes the cap, and with 0 nothing changes.
Two teams at 50/50 on 8-GPU nodes, run through the simulator (passes every 10 s)."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0, prio: int = 0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, priority=prio,
                   user="u", resumable=True)


def _run(jobs: list[JobSpec], over: int, *, nodes: int = 3, cap: int = 8, depth: int = 8) -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, max_gpus={"a": cap},
                         policy=Policy(debug_over_cap=over, queue_depth=depth))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def _peak(res: SimResult, account: str) -> int:
    """The most allocated GPUs ``account`` ran at once, from the event log."""
    running: dict[str, int] = {}
    peak = 0
    for e in res.events:
        if e.event == "start" and e.account == account and e.allocated:
            running[e.job] = e.gpus
            peak = max(peak, sum(running.values()))
        elif e.event in ("end", "preempt") and e.job in running:
            del running[e.job]
    return peak


# a's cap (8) is filled by its own 8-hour training run, protected for all of it: no rule may take it
_PROTECTED = _job("train", "a", 8, 0.0, 8 * HOUR, mr=8 * HOUR)


def test_debug_overdraft_starts_a_capped_teams_debug_job_beside_its_protected_work() -> None:
    res = _run([_PROTECTED, _job("d", "a", 4, 100.0, 600.0, mr=300.0)], over=8)
    assert _start(res, "d") <= 110.0
    assert _start(res, "train") == 0.0 and not [e for e in res.events if e.event == "preempt"]
    why = next(e.reason for e in res.events if e.event == "start" and e.job == "d")
    assert why is not None and "over its team's max_gpus by 4 GPU(s) of debug work" in why


def test_debug_overdraft_off_the_debug_job_waits_for_the_protection() -> None:
    # the behaviour the knob exists for, kept by default: the cap holds every start
    res = _run([_PROTECTED, _job("d", "a", 4, 100.0, 600.0, mr=300.0)], over=0)
    assert _start(res, "d") == 8 * HOUR


def test_debug_overdraft_is_bounded_by_debug_over_cap() -> None:
    # three 4-GPU debug jobs at once with 8 GPUs of overdraft: two start, the third waits for one to end
    jobs = [_PROTECTED, *(_job(f"d{i}", "a", 4, 100.0, 600.0, mr=300.0) for i in range(3))]
    res = _run(jobs, over=8)
    starts = sorted(_start(res, f"d{i}") for i in range(3))
    assert starts[1] <= 110.0 and starts[2] >= 700.0
    assert _peak(res, "a") == 16


def test_debug_overdraft_admits_only_work_that_is_short_by_its_work_too() -> None:
    # a 10-minute protection on a 5-hour run is not debug work: it waits for the cap
    res = _run([_PROTECTED, _job("long", "a", 4, 100.0, 5 * HOUR, mr=300.0)], over=8)
    assert _start(res, "long") == 8 * HOUR


def test_debug_overdraft_admits_no_protected_work_beyond_the_cap() -> None:
    # a 1-hour protection on 10 minutes of work is not debug work either
    res = _run([_PROTECTED, _job("x", "a", 4, 100.0, 600.0, mr=HOUR)], over=8)
    assert _start(res, "x") == 8 * HOUR
    assert _peak(res, "a") == 8


def test_debug_overdraft_lets_no_other_work_start_while_the_team_is_beyond_its_cap() -> None:
    # d runs in the overdraft (6 + 4 of a cap of 8); a's 2-GPU batch job would fit the cap
    # beside train alone, so it waits only for d to end, never runs beyond the cap itself
    jobs = [_job("train", "a", 6, 0.0, 8 * HOUR, mr=8 * HOUR), _job("d", "a", 4, 100.0, 900.0, mr=300.0),
            _job("batch", "a", 2, 200.0, 2 * HOUR, mr=HOUR)]
    res = _run(jobs, over=8)
    d_end = next(e.t for e in res.events if e.event == "end" and e.job == "d")
    assert _start(res, "d") <= 110.0
    assert d_end <= _start(res, "batch") <= d_end + 10.0
    assert _peak(res, "a") == 10


def test_debug_overdraft_reaches_debug_jobs_behind_the_queue_depth_of_capped_work() -> None:
    # a's queue offers 2 candidates a visit, and its 3 batch jobs (declared priority 1, waiting
    # since before) come first: the cap holds them all, and the debug job behind them still starts
    jobs = [_PROTECTED, *(_job(f"b{i}", "a", 1, 50.0, 2 * HOUR, mr=HOUR, prio=1) for i in range(3)),
            _job("d", "a", 4, 100.0, 600.0, mr=300.0)]
    res = _run(jobs, over=8, depth=2)
    assert _start(res, "d") <= 110.0
    assert min(_start(res, f"b{i}") for i in range(3)) == 8 * HOUR
