"""A team's own rules throw a non-resumable job's run away at most once
(core.preemption.thrown_away_once): ``within-team`` and ``debug-slice`` take it once, then leave it
to finish.  Two teams at 50/50, run through the simulator (passes every 10 s)."""

from __future__ import annotations

from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, gpus: int, submit: float, work: float, *, mr: float, prio: int, resumable: bool = True) -> JobSpec:
    return JobSpec(id=i, submit=submit, account="a", gpus=gpus, work=work, min_runtime=mr, priority=prio,
                   user="u", resumable=resumable)


def _run(jobs: list[JobSpec], *, nodes: int, max_gpus: dict[str, int] | None = None) -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, max_gpus=max_gpus)
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _evictions(res: SimResult, job: str) -> list[str | None]:
    return [e.rule for e in res.events if e.event == "preempt" and e.job == job]


def _session_and_stream(resumable: bool, work: float = 8 * HOUR) -> list[JobSpec]:
    # team a's 8-GPU session (priority 1, 4 h protection, 8 h of work) and a stream of its
    # priority-2 work (8 GPUs, 30 min protection, 2 h of work) arriving every 3 h from 3 h on:
    # each stream job finds the session past its protection
    session = _job("session", 8, 0.0, work, mr=4 * HOUR, prio=1, resumable=resumable)
    stream = [_job(f"w{i}", 8, 3 * HOUR * (i + 1), 2 * HOUR, mr=1800.0, prio=2) for i in range(12)]
    return [session, *stream]


def test_within_team_throws_a_non_resumable_session_away_at_most_once() -> None:
    # one node: the stream can only get it by taking the session's place.  Before the rule the
    # session was taken at the end of each 4 h protection, 8 times in 36 h, and never finished
    res = _run(_session_and_stream(resumable=False), nodes=1)
    assert _evictions(res, "session") == ["within-team"]
    assert [e.job for e in res.events if e.event == "end"].count("session") == 1


def test_within_team_still_takes_a_resumable_job_each_time_it_outranks_it() -> None:
    # a resumable job loses at most a checkpoint interval: the stream may take it again and again
    # (16 h of work: it keeps what it checkpointed, and still outlasts its protection twice)
    res = _run(_session_and_stream(resumable=True, work=16 * HOUR), nodes=1)
    assert len(_evictions(res, "session")) >= 2
    assert set(_evictions(res, "session")) == {"within-team"}


def test_under_its_ceiling_a_team_throws_a_non_resumable_job_away_at_most_once() -> None:
    # two nodes, a capped at 8 GPUs: the cap search (core.preemption.caps) applies the same rule
    res = _run(_session_and_stream(resumable=False), nodes=2, max_gpus={"a": 8})
    assert _evictions(res, "session") == ["within-team"]
