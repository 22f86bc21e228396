"""Issue 10's rules, each on a small hand-made scenario (two teams at 50/50 on one or two
8-GPU nodes), run through the simulator: the wait or outcome that proves the rule."""

from __future__ import annotations

import datetime as dt

from allotment.compile.model import Boost, Policy
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0, prio: int = 0,
         depends_on: tuple[str, ...] = ()) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, priority=prio,
                   user="u", depends_on=depends_on)


def _run(jobs: list[JobSpec], *, nodes: int = 2, health: tuple[NodeEvent, ...] = (), **pol: object) -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, policy=Policy(**pol))  # type: ignore[arg-type]
    return simulate(config, Workload.of(jobs, health))


def _starts(res: SimResult, job: str) -> list[float]:
    return [e.t for e in res.events if e.event == "start" and e.job == job]


def _preempted(res: SimResult, job: str) -> list[float]:
    return [e.t for e in res.events if e.event == "preempt" and e.job == job]


def test_a_start_through_preemption_does_not_take_a_reserved_node() -> None:
    # b's gang G (16 GPUs) holds both nodes from ~4,000 s (when a1 ends).  a's 10 h job h may slice
    # a1, but it would still run then: it must not land on a reserved node.
    jobs = [
        _job("a0", "a", 4, 0.0, 1500.0), _job("a1", "a", 4, 0.0, 4000.0), _job("b1", "b", 4, 0.0, 3500.0),
        _job("g", "b", 16, 100.0, HOUR), _job("h", "a", 8, 2000.0, 10 * HOUR, prio=10),
    ]
    res = _run(jobs)
    assert _preempted(res, "a1") == []
    assert _starts(res, "g")[0] <= 4100.0  # not ~38,000 s behind h


def test_a_debug_job_backfills_a_reserved_node_if_its_protection_ends_in_time_and_yields_to_the_gang() -> None:
    # n000 frees at 1,000 s, n001 at 5,000 s: b's gang g holds both from 5,000 s.  At 4,500 s a's
    # debug job d (300 s protection, 800 s of work: short by both) would overrun the reservation,
    # but its protection ends by then: it starts at once on n000 and yields to g at 5,000 s.  A
    # longer protection (batch job q, 1,800 s) may not use the reserved node: it waits for the gang.
    jobs = [
        _job("a0", "a", 8, 0.0, 1000.0, mr=1000.0), _job("a1", "a", 8, 0.0, 5000.0, mr=5000.0),
        _job("g", "b", 16, 10.0, HOUR, mr=HOUR), _job("d", "a", 8, 4500.0, 800.0, mr=300.0),
        _job("q", "a", 8, 4000.0, 1500.0, mr=1800.0),
    ]
    res = _run(jobs)
    assert _starts(res, "g") == [5000.0]  # not delayed
    assert _starts(res, "d")[0] <= 4510.0  # a debug job starts in seconds
    assert [(e.t, e.rule) for e in res.events if e.event == "preempt" and e.job == "d"] == [(5000.0, "reservation")]
    assert _starts(res, "q")[0] >= 5000.0 + HOUR  # after the gang


def test_only_a_job_short_by_its_work_backfills_a_reserved_node_not_one_protected_briefly_but_long() -> None:
    # as above, but d is protected 600 s and runs 12 h: short by its minimum runtime only.  It may
    # not take the reserved node and be thrown away at the gang's start; it waits for the gang.
    jobs = [
        _job("a0", "a", 8, 0.0, 1000.0, mr=1000.0), _job("a1", "a", 8, 0.0, 5000.0, mr=5000.0),
        _job("g", "b", 16, 10.0, HOUR, mr=HOUR), _job("d", "a", 8, 4000.0, 12 * HOUR, mr=600.0),
    ]
    res = _run(jobs)
    assert _starts(res, "g") == [5000.0]
    assert _preempted(res, "d") == []
    assert _starts(res, "d")[0] >= 5000.0 + HOUR


def test_an_over_served_teams_priority_never_takes_gpus_ahead_of_a_better_ranked_team() -> None:
    # b used both nodes first, so it cannot reclaim from a before ~4,200 s (hysteresis); a runs
    # both nodes from 2,000 s (over-served).  a's priority-1000 job h may not slice a's own work
    # while b's job waits: b1 starts when a1 ends at 3,000 s, as it would without the priority.
    jobs = [
        _job("b0", "b", 16, 0.0, 2000.0, mr=2000.0),
        _job("a1", "a", 8, 1.0, 1000.0), _job("a2", "a", 8, 1.0, 10 * HOUR),
        _job("h", "a", 8, 2100.0, 10 * HOUR, prio=1000), _job("b1", "b", 8, 2100.0, HOUR),
    ]
    res = _run(jobs)
    assert _starts(res, "b1")[0] <= 3100.0  # not 4,500 s, after h sliced a1
    assert _preempted(res, "a1") == []


def test_an_over_served_teams_short_job_may_slice_its_own_longer_work_while_a_better_ranked_team_waits() -> None:
    # as above, but h is short: sliced in when a1's protection ends (2,600 s), it ends (2,900 s)
    # before a1 would (3,000 s), so the slice holds no GPU longer than a already would and b1
    # gets the node no later than without it
    jobs = [
        _job("b0", "b", 16, 0.0, 2000.0, mr=2000.0),
        _job("a1", "a", 8, 1.0, 1000.0), _job("a2", "a", 8, 1.0, 10 * HOUR),
        _job("h", "a", 8, 2100.0, 300.0, mr=300.0, prio=1000), _job("b1", "b", 8, 2100.0, HOUR),
    ]
    res = _run(jobs)
    assert _preempted(res, "a1") == [2600.0] and _starts(res, "h") == [2600.0]  # not 3,000 s
    assert _starts(res, "b1")[0] <= 3100.0  # b1 no later than a1's own end


def test_unallocated_work_yields_to_any_allocated_job_not_only_the_first_blocked() -> None:
    # a's gang g is a's first blocked candidate (b1 is protected for 10 h); a's short job j comes
    # second in a's queue, yet it may take the node b's unallocated work u holds at once
    jobs = [
        _job("b1", "b", 8, 0.0, 10 * HOUR, mr=10 * HOUR), _job("u", "b", 8, 0.0, 10 * HOUR, mr=0.0),
        _job("g", "a", 16, 10.0, HOUR, prio=10), _job("j", "a", 8, 10.0, 3000.0),
    ]
    res = _run(jobs)
    assert _starts(res, "j")[0] <= 100.0  # not ~36,000 s
    assert _preempted(res, "u")[0] <= 100.0


def test_priority_zero_slices_negative_priority_work_of_its_own_team() -> None:
    jobs = [_job("low", "a", 8, 0.0, 10 * HOUR, prio=-5), _job("z", "a", 8, 10.0, HOUR)]
    res = _run(jobs, nodes=1)
    assert _starts(res, "z")[0] <= 700.0  # when low's 600 s protection ends, not ~36,000 s
    assert _preempted(res, "low") != []


def test_a_boosted_job_is_offered_first_wherever_its_declared_priority_puts_it_in_the_queue() -> None:
    # nine priority-1 jobs are ahead of x by declared priority (more than queue_depth = 8); a
    # +100 boost must still make x the first to start when the node frees at 1,000 s
    boost = Boost("job:x", 100.0, dt.datetime(2100, 1, 1, tzinfo=dt.UTC), "demo", "lead")
    jobs = [_job("r", "a", 8, 0.0, 1000.0)]
    jobs += [_job(f"p{i}", "a", 8, 10.0, 1000.0, prio=1) for i in range(9)]
    jobs += [_job("x", "a", 8, 10.0, 1000.0)]
    res = _run(jobs, nodes=1, boosts=(boost,))
    assert _starts(res, "x")[0] == 1000.0  # not 3,600 s (f8557ad: x was outside the first 8)


def test_another_teams_priority_does_not_propagate_to_a_prerequisite() -> None:
    # b's priority-1000 job depends on a's job pre: pre keeps a's priority 0, so it may not
    # slice a's own priority-0 work (pre is protected 30 min: not a debug job, which could)
    jobs = [
        _job("a_low", "a", 8, 0.0, 10 * HOUR),
        _job("pre", "a", 8, 10.0, HOUR, mr=1800.0), _job("dep", "b", 8, 10.0, HOUR, prio=1000, depends_on=("pre",)),
    ]
    res = _run(jobs, nodes=1)
    assert _preempted(res, "a_low") == []
    assert _starts(res, "pre")[0] == 10 * HOUR


def test_unallocated_false_rejects_minimum_runtime_zero_at_submission_with_the_reason() -> None:
    jobs = [_job("free", "a", 8, 0.0, HOUR, mr=0.0), _job("paid", "a", 8, 0.0, HOUR)]
    res = _run(jobs, nodes=1, unallocated_enabled=False)
    rejects = [e for e in res.events if e.event == "reject"]
    assert [e.job for e in rejects] == ["free"]
    assert "unallocated: false" in (rejects[0].reason or "")
    assert _starts(res, "free") == [] and _starts(res, "paid") == [0.0]
    assert _starts(_run(jobs, nodes=1), "free") != []  # the default still runs free work


def test_draining_never_kills_a_run_to_completion_non_resumable_job() -> None:
    jobs = [JobSpec(id="nr", submit=0.0, account="a", gpus=8, work=4 * HOUR, min_runtime=600.0, resumable=False,
                    user="u")]
    health = (NodeEvent(HOUR, "n000", "unhealthy"), NodeEvent(10 * HOUR, "n000", "healthy"))
    kept = _run(jobs, nodes=1, health=health, non_resumable="run_to_completion")
    assert _preempted(kept, "nr") == [] and _starts(kept, "nr") == [0.0]
    assert [e.t for e in kept.events if e.event == "end" and e.job == "nr"] == [4 * HOUR]
    requeued = _run(jobs, nodes=1, health=health)  # the default (requeue) drains it at once
    assert _preempted(requeued, "nr") == [HOUR]


def test_a_whole_node_job_of_an_under_served_team_does_not_starve_behind_a_stream_of_small_jobs() -> None:
    # b submits a protected 4-GPU job every 900 s for 20 h, so the node is never empty; after
    # waiting an hour a's 8-GPU job holds the node and the stream backfills only around it
    stream = [_job(f"s{i}", "b", 4, 900.0 * i, 1800.0, mr=1800.0) for i in range(80)]
    res = _run([*stream, _job("whole", "a", 8, 100.0, HOUR)], nodes=1)
    assert _starts(res, "whole")[0] <= 100.0 + HOUR + 1800.0 + 300.0  # not ~72,000 s


def test_a_prerequisite_inherits_its_same_team_dependants_boost_not_only_its_declared_priority() -> None:
    # x and pre wait for the node, x first by age; dep (same team) waits for pre and carries a
    # +100 boost: pre scores at least 0.9 x dep's score, so pre starts first when r ends
    boost = Boost("job:dep", 100.0, dt.datetime(2100, 1, 1, tzinfo=dt.UTC), "demo", "lead")
    jobs = [
        _job("r", "a", 8, 0.0, 1000.0), _job("x", "a", 8, 10.0, 1000.0), _job("pre", "a", 8, 20.0, 1000.0),
        _job("dep", "a", 8, 20.0, 1000.0, depends_on=("pre",)),
    ]
    res = _run(jobs, nodes=1, boosts=(boost,))
    assert _starts(res, "pre") == [1000.0]  # not 2,000 s, after x
    assert _starts(res, "dep")[0] <= _starts(res, "x")[0]  # dep follows pre, x waits for both


def test_free_work_yields_to_an_allocated_job_beyond_its_queues_first_candidates() -> None:
    # one node: b's protected 4-GPU job and b's free work (4 GPUs) fill it.  a queues eight 6-GPU
    # jobs (none can start: free work frees only 4) and then a 4-GPU job, ninth in its queue by
    # age, beyond the queue_depth (8) candidates a visit offers.  Free work yields to any allocated
    # job: the 4-GPU job takes its place at once (it waited 31,800 s in a 30-day run).
    jobs = [
        _job("r", "b", 4, 0.0, 10 * HOUR, mr=10 * HOUR), _job("u", "b", 4, 0.0, 10 * HOUR, mr=0.0),
        *[_job(f"big{i}", "a", 6, 50.0 + i, HOUR) for i in range(8)], _job("small", "a", 4, 100.0, HOUR),
    ]
    res = _run(jobs, nodes=1)
    assert _starts(res, "small")[0] <= 110.0
    first = next((e.t, e.by, e.rule) for e in res.events if e.event == "preempt" and e.job == "u")
    assert first == (_starts(res, "small")[0], "small", "unallocated")
