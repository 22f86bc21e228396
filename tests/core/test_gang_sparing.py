"""Victim rule ``gang-sparing`` (knob ``spare_gangs``; docs/design/preemption.md, "Sparing
gangs").  ``class``: among the ways to free room that need the same worst victim class, a search
breaks no running gang larger than the requester first, whatever the lost work says, and forbids
nothing.  ``first``: such an option ranks after every other, whatever its class.  ``wait``: and a
smaller job takes a larger allocated gang only once it is starving."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.core.starvation import STARVING_S
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

PROTECTED = 600.0
LONG = 50_000.0


def _job(i: str, account: str, gpus: int, submit: float, *, priority: int = 0, ckpt: float | None = None,
         work: float = LONG) -> JobSpec:
    # ckpt None: checkpoints continuously, so its eviction throws no work away (the cheapest
    # victim of its class by lost work); a long interval: its eviction throws its whole run away
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=PROTECTED, user="u",
                   resumable=True, checkpoint_interval=ckpt, priority=priority)


def _run(jobs: list[JobSpec], weights: dict[str, float], spare: str, nodes: int = 3) -> SimResult:
    config = make_config(weights, nodes=nodes, policy=Policy(spare_gangs=spare))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _first_victims(res: SimResult, by: str) -> list[str]:
    return [e.job for e in res.events if e.event == "preempt" and e.by == by]


def test_a_higher_priority_job_takes_its_teams_single_node_job_before_a_gang_that_lost_nothing() -> None:
    # one team on three 8-GPU nodes: a 16-GPU gang (checkpointing continuously) and a one-node job
    # (checkpointing every 100,000 s) past their protection; a priority-5 8-GPU job arrives.  By
    # lost work the gang is the cheapest victim (it loses nothing) and today it is evicted -- a
    # two-node drain later to run again -- for one node; under the rule the one-node job goes.
    jobs = [_job("gang", "a", 16, 0.0), _job("one", "a", 8, 0.0, ckpt=100_000.0),
            _job("hi", "a", 8, 2000.0, priority=5)]
    assert _first_victims(_run(jobs, {"a": 1}, "off"), "hi") == ["gang"]
    for form in ("class", "first"):
        res = _run(jobs, {"a": 1}, form)
        assert _first_victims(res, "hi") == ["one"]
        assert [e.rule for e in res.events if e.event == "preempt"] == ["within-team"]


def test_a_reclaim_takes_a_single_node_job_before_a_gang_of_the_same_donor() -> None:
    # a runs everything (a 16-GPU gang and a one-node job) while b, owed half, runs nothing:
    # b's 8-GPU job reclaims one node.  Today it breaks the gang (no lost work); under the rule it
    # takes the one-node job, and the distance check passes the same way (same donor, 8 GPUs moved
    # either way at least).
    jobs = [_job("gang", "a", 16, 0.0), _job("one", "a", 8, 0.0, ckpt=100_000.0), _job("b1", "b", 8, 2000.0)]
    weights = {"a": 1, "b": 1}
    assert _first_victims(_run(jobs, weights, "off"), "b1") == ["gang"]
    for form in ("class", "first"):
        res = _run(jobs, weights, form)
        assert _first_victims(res, "b1") == ["one"]
        assert [e.rule for e in res.events if e.event == "preempt"] == ["reclaim"]


def test_a_gang_is_still_taken_when_it_is_the_only_option() -> None:
    # the rule reorders and forbids nothing: with only the gang to take, the reclaim breaks it
    # under the rule too, at the same moment
    jobs = [_job("gang", "a", 16, 0.0), _job("b1", "b", 8, 2000.0)]
    weights = {"a": 1, "b": 1}
    today = _run(jobs, weights, "off", nodes=2)
    assert _first_victims(today, "b1") == ["gang"]
    for form in ("class", "first"):
        spared = _run(jobs, weights, form, nodes=2)
        assert [(e.t, e.job) for e in today.events if e.event == "preempt"] == \
            [(e.t, e.job) for e in spared.events if e.event == "preempt"]


def test_a_cap_search_takes_a_single_node_job_before_a_gang() -> None:
    # a's max_gpus of 24 is full (a 16-GPU gang and a one-node job) on four nodes, one free; a's
    # priority-5 8-GPU job makes room under the cap by its own lower-priority work: today the
    # gang (no lost work), under the rule the one-node job
    jobs = [_job("gang", "a", 16, 0.0), _job("one", "a", 8, 0.0, ckpt=100_000.0),
            _job("hi", "a", 8, 2000.0, priority=5)]

    def run(spare: str) -> SimResult:
        config = make_config({"a": 1, "b": 1}, nodes=4, policy=Policy(spare_gangs=spare), max_gpus={"a": 24})
        return simulate(config, Workload.of(jobs, ()), keep_events=True)

    assert _first_victims(run("off"), "hi") == ["gang"]
    assert _first_victims(run("class"), "hi") == _first_victims(run("first"), "hi") == ["one"]


def test_first_prefers_another_teams_work_to_its_own_teams_gang_and_waits_when_that_fails() -> None:
    # a (owed 18 of 24 GPUs, running a 16-GPU gang) and b (owed 6, running a one-node job since
    # 0 s); a's priority-5 8-GPU job may take a's gang (within-team, class 2) or b's job (reclaim,
    # class 3).  Today and with ``class`` it breaks the gang.  With ``first`` it picks b's job,
    # which fails the summed-distance check (a 16 -> 24 of 18 owed, b 8 -> 0 of 6: 4 -> 12), so it
    # waits, here until the gang ends -- the cost ``first`` pays (docs/design/preemption.md)
    jobs = [_job("gang", "a", 16, 0.0, work=20_000.0), _job("bj", "b", 8, 0.0, ckpt=100_000.0),
            _job("hi", "a", 8, 2000.0, priority=5)]
    weights = {"a": 3, "b": 1}
    for form in ("off", "class"):
        assert _first_victims(_run(jobs, weights, form), "hi") == ["gang"]
    res = _run(jobs, weights, "first")
    assert not [e for e in res.events if e.event == "preempt"]
    assert _start(res, "hi") == 20_000.0


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def _preempted_at(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "preempt" and e.job == job)


def test_wait_a_smaller_job_breaks_a_gang_only_once_it_is_starving() -> None:
    # the gang fills both nodes; a's priority-5 8-GPU job (eligible at 2,000 s) and, apart, b's
    # 8-GPU job (b owed half, a running all) can only free a node by breaking it.  Today each does
    # at once; with ``wait`` not before it has waited STARVING_S (an hour, read at the epoch)
    for jobs, weights, by in (([_job("gang", "a", 16, 0.0), _job("hi", "a", 8, 2000.0, priority=5)], {"a": 1}, "hi"),
                              ([_job("gang", "a", 16, 0.0), _job("b1", "b", 8, 2000.0)], {"a": 1, "b": 1}, "b1")):
        today = _run(jobs, weights, "off", nodes=2)
        assert _first_victims(today, by) == ["gang"] and _preempted_at(today, "gang") < 2000.0 + 300.0
        res = _run(jobs, weights, "wait", nodes=2)
        assert _first_victims(res, by) == ["gang"]
        assert 2000.0 + STARVING_S <= _preempted_at(res, "gang") <= 2000.0 + STARVING_S + 300.0
