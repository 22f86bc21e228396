"""Knob ``hold_evicts`` (docs/design/reservation.md, "A hold that evicts past protection"): resumable
allocated work yields to a reservation once its protection ends, so a hold drains by the
protections on its nodes, and a tier-0 holder evicts what is past them; non-resumable work and a
holder of a team at or above what it is owed still wait for the work to end."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

PROTECTED = 1000.0  # b's and c's runs' minimum runtime
WORK = 5000.0  # and their work


def _job(i: str, account: str, gpus: int, submit: float, work: float, mr: float, *, resumable: bool = True) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u",
                   resumable=resumable)


def _run(jobs: list[JobSpec], policy: Policy) -> SimResult:
    # three teams on two 8-GPU nodes: b and c run one each (a node each, a little above what they
    # are owed), a runs nothing (tier 0)
    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=2, policy=policy)
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def _jobs(*, resumable: bool = True) -> list[JobSpec]:
    # a's 16-GPU gang arrives at 10 s; it is beyond a's entitlement, so it may not reclaim and holds
    return [_job("b0", "b", 8, 0.0, WORK, PROTECTED, resumable=resumable),
            _job("c1", "c", 8, 0.0, WORK, PROTECTED, resumable=resumable),
            _job("g", "a", 16, 10.0, 3600.0, 3600.0)]


def test_a_tier_0_holder_evicts_resumable_work_past_its_protection_on_its_nodes() -> None:
    today = _run(_jobs(), Policy())
    assert _start(today, "g") == WORK  # the drain waits for b's and c's work to end
    for knob in ("all", "borrowed"):  # b0 and c1 each took their team above what it is owed
        res = _run(_jobs(), Policy(hold_evicts=knob))
        assert _start(res, "g") == PROTECTED  # planned by, and started at, the protections' end
        rules = {e.job: e.rule for e in res.events if e.event == "preempt"}
        assert rules == {"b0": "reservation", "c1": "reservation"}


def test_non_resumable_work_is_not_evicted_for_a_hold() -> None:
    res = _run(_jobs(resumable=False), Policy(hold_evicts="all"))
    assert _start(res, "g") == WORK
    assert not [e for e in res.events if e.event == "preempt"]


def test_borrowed_only_work_that_took_its_team_above_what_it_is_owed_yields() -> None:
    # b is owed 12 of the 16 GPUs: b0 (8 GPUs, ends at 3,000 s) starts within that, b1 (8 more,
    # ends at 5,000 s) takes b to 16, above it.  a's gang holds both nodes from 10 s.  Today it
    # starts when b1 ends; with "borrowed" b1 yields at its protection's end but b0 does not, so
    # the gang starts when b0 ends, evicting b1; with "all" both yield at 1,000 s.
    jobs = [_job("b0", "b", 8, 0.0, 3000.0, PROTECTED), _job("b1", "b", 8, 0.0, WORK, PROTECTED),
            _job("g", "a", 16, 10.0, 3600.0, 3600.0)]

    def run(knob: str) -> SimResult:
        return simulate(make_config({"a": 1, "b": 3}, nodes=2, policy=Policy(hold_evicts=knob)),
                        Workload.of(jobs, ()), keep_events=True)

    assert _start(run("off"), "g") == WORK
    borrowed = run("borrowed")
    assert _start(borrowed, "g") == 3000.0
    assert [e.job for e in borrowed.events if e.event == "preempt"] == ["b1"]
    every = run("all")
    assert _start(every, "g") == PROTECTED
    assert {e.job: e.rule for e in every.events if e.event == "preempt"} == {"b0": "reservation", "b1": "reservation"}
