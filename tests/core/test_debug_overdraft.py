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


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0, prio: int = 0,
         resumable: bool = True) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, priority=prio,
                   user="u", resumable=resumable)


def _run(jobs: list[JobSpec], over: int, *, nodes: int = 3, cap: int = 8, depth: int = 8, admits: str = "work",
         non_resumable: str = "requeue") -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, max_gpus={"a": cap},
                         policy=Policy(debug_over_cap=over, queue_depth=depth, debug_over_cap_admits=admits,
                                       non_resumable=non_resumable))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def _starts(res: SimResult, job: str) -> list[float]:
    return [e.t for e in res.events if e.event == "start" and e.job == job]


def _preempts(res: SimResult, rule: str) -> list[tuple[float, str, str | None]]:
    """(when, victim, for whom) of every preemption by ``rule``."""
    return [(e.t, e.job, e.by) for e in res.events if e.event == "preempt" and e.rule == rule]


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


# -- debug_over_cap_admits: protection (the overdraft admits debug jobs by their protection, and
# such a job yields to its team's work the cap holds once past it) ------------------------------

# a debug job by its protection (5 minutes), not by its work (5 hours)
_LONG_DEBUG = _job("d", "a", 4, 100.0, 5 * HOUR, mr=300.0)


def test_debug_overdraft_by_protection_admits_a_debug_job_longer_than_the_threshold() -> None:
    res = _run([_PROTECTED, _LONG_DEBUG], over=8, admits="protection")
    assert _start(res, "d") <= 110.0
    assert _peak(res, "a") == 12
    # by its work (the default) it waits for the cap, as before
    assert _start(_run([_PROTECTED, _LONG_DEBUG], over=8), "d") == 8 * HOUR


def test_overdraft_job_past_its_protection_yields_to_its_teams_work_the_cap_holds() -> None:
    # d runs beyond the cap (6 + 4 of 8); batch (2 GPUs, protected 1 h: never debug work) would
    # fit beside train alone: at d's protection end it takes d's place, and the team is back
    # under its cap; d, evicted, waits under the cap (it is no longer admitted beyond it)
    jobs = [_job("train", "a", 6, 0.0, 8 * HOUR, mr=8 * HOUR), _LONG_DEBUG, _job("batch", "a", 2, 200.0, 2 * HOUR, mr=HOUR)]
    res = _run(jobs, over=8, admits="protection")
    assert _preempts(res, "overdraft-yield") == [(400.0, "d", "batch")]
    assert _start(res, "batch") == 400.0
    assert _starts(res, "d") == [100.0, 8 * HOUR]  # back only when train's end leaves room under the cap
    assert _peak(res, "a") == 10


def test_overdraft_job_does_not_yield_while_no_capped_work_could_use_its_room() -> None:
    # batch needs 4 GPUs under the cap beside train's 6: taking d (4 beyond) leaves only 2, so
    # d keeps running past its protection (the yield takes nothing it cannot use)
    jobs = [_job("train", "a", 6, 0.0, 8 * HOUR, mr=8 * HOUR), _LONG_DEBUG, _job("batch", "a", 4, 200.0, 2 * HOUR, mr=HOUR)]
    res = _run(jobs, over=8, admits="protection")
    assert _preempts(res, "overdraft-yield") == []
    assert _starts(res, "d") == [100.0]


def test_overdraft_admits_by_protection_no_job_evicted_before_unless_short_by_its_work() -> None:
    # a non-resumable debug job the yield took once waits under the cap afterwards, even with
    # overdraft room free; a short one (by its remaining work) is admitted again as before
    jobs = [_job("train", "a", 6, 0.0, 8 * HOUR, mr=8 * HOUR), _job("d", "a", 4, 100.0, 5 * HOUR, mr=300.0, resumable=False),
            _job("batch", "a", 2, 200.0, 1800.0, mr=1200.0)]
    res = _run(jobs, over=8, admits="protection")
    assert _preempts(res, "overdraft-yield") == [(400.0, "d", "batch")]
    assert _starts(res, "d") == [100.0, 8 * HOUR]  # not at batch's end: 6 + 4 > 8


def test_overdraft_by_protection_admits_no_job_kept_to_completion_unless_short() -> None:
    # with non_resumable: run_to_completion no rule may take a non-resumable job, so it cannot
    # yield: beyond the cap only if short by its work
    jobs = [_PROTECTED, _job("d", "a", 4, 100.0, 5 * HOUR, mr=300.0, resumable=False)]
    res = _run(jobs, over=8, admits="protection", non_resumable="run_to_completion")
    assert _start(res, "d") == 8 * HOUR


def test_overdraft_yield_takes_a_job_at_most_once_and_no_pair_evicts_each_other_back_and_forth() -> None:
    # d and x run beyond a's cap; b (10 h, protected 30 min) takes both at d's protection end;
    # d, held under the cap, takes b back by debug-slice at b's protection end (same priority, b
    # ends later).  e then runs beyond the cap again: b may take e, never d a second time, so
    # b waits for d's end instead of evicting it again (and d would take b back again...)
    jobs = [_job("train", "a", 4, 0.0, 8 * HOUR, mr=8 * HOUR), _job("x", "a", 4, 50.0, 600.0, mr=300.0),
            _job("d", "a", 4, 100.0, 2 * HOUR, mr=300.0), _job("b", "a", 4, 200.0, 10 * HOUR, mr=1800.0),
            _job("e", "a", 4, 2300.0, 2 * HOUR, mr=300.0)]
    res = _run(jobs, over=8, admits="protection")
    assert ("d", "b") in {(v, by) for _, v, by in _preempts(res, "overdraft-yield")}
    assert next((t, v, by) for t, v, by in _preempts(res, "debug-slice") if v == "b") == (2200.0, "b", "d")
    victims = [v for _, v, _ in _preempts(res, "overdraft-yield")]
    assert len(victims) == len(set(victims))  # each job at most once
    d_end = next(e.t for e in res.events if e.event == "end" and e.job == "d")
    assert _starts(res, "b")[1] >= d_end  # b waited for d rather than take it again
    pairs = [(e.by, e.job) for e in res.events if e.event == "preempt"]  # (evictor, victim), in order
    for i, (a, b) in enumerate(pairs):  # a evicts b, b evicts a, a evicts b again: never
        back = [j for j in range(i + 1, len(pairs)) if pairs[j] == (b, a)]
        assert not back or (a, b) not in pairs[back[0] + 1:], f"{a} and {b} evict each other back and forth"


def test_fast_walk_reuses_no_failed_cap_search_once_a_start_takes_the_team_beyond_its_cap() -> None:
    # b's cap search fails at 400 (d0, past its protection, has the higher priority and a is
    # not beyond its cap of 12) and the fast walk keeps that failure; d1's start at 500 takes a
    # beyond the cap, which makes d0 a yield victim without any stop or protection end: the
    # kept failure must not be reused (``Kept.cap_failed``'s ``beyond``), or b waits a pass
    jobs = [_job("train", "a", 4, 0.0, 8 * HOUR, mr=8 * HOUR), _job("d0", "a", 8, 0.0, 5 * HOUR, mr=300.0, prio=5),
            _job("b", "a", 4, 400.0, 2 * HOUR, mr=HOUR), _job("d1", "a", 1, 500.0, 5 * HOUR, mr=300.0)]
    config = make_config({"a": 1, "b": 1}, nodes=3, max_gpus={"a": 12},
                         policy=Policy(debug_over_cap=8, debug_over_cap_admits="protection"))
    fast, ref = (simulate(config, Workload.of(jobs, ()), keep_events=True, reference=r) for r in (False, True))
    assert _preempts(ref, "overdraft-yield") == [(500.0, "d0", "b")]
    assert [(e.t, e.event, e.job, e.rule) for e in fast.events] == [(e.t, e.event, e.job, e.rule) for e in ref.events]
