"""A paused run resumes exactly, a fork is an exact copy, and a switch to the same config changes
nothing (``sim/switch.py``): what lets ``allot plan`` warm both sides up once, under the base."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig
from allotment.sim import switch
from allotment.sim.events import Event
from allotment.sim.runner import BACK, LAUNCH, _Sim
from allotment.sim.switchable import switch_refusal
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.strategies import clusters, workloads

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DAY = 86400.0
Case = tuple[CompiledConfig, Workload]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    config = draw(clusters())
    return config, draw(workloads(config))


def _start(case: Case) -> _Sim:
    config, workload = case
    sim = switch.start(config, workload, cluster=config.largest_cluster(), days=1.0)
    sim.log.kept = []
    return sim


def _outcome(sim: _Sim, events: list[Event]) -> tuple[list[Event], str]:
    return events, json.dumps(sim.summary(), sort_keys=True)


def _uninterrupted(case: Case) -> tuple[list[Event], str]:
    sim = _start(case)
    switch.finish(sim)
    return _outcome(sim, sim.log.kept or [])


PAUSES = st.integers(0, 8 * 3600).map(float)


@PROPS
@given(cases(), PAUSES)
def test_a_paused_run_resumes_byte_identical(case: Case, at: float) -> None:
    sim = _start(case)
    switch.pause(sim, at)
    assert all(e.t < at for e in sim.log.kept or [])
    switch.finish(sim)
    assert _outcome(sim, sim.log.kept or []) == _uninterrupted(case)


@PROPS
@given(cases(), PAUSES)
def test_the_base_runs_on_from_its_pause_as_if_never_copied(case: Case, at: float) -> None:
    """The head is a copy switched in at the pause; whatever it does, the paused base runs on
    byte-identical to an uninterrupted run."""
    config, _ = case
    sim = _start(case)
    switch.pause(sim, at)
    before = list(sim.log.kept or [])
    head = switch.switched(sim, _other(config))
    head.log.kept = list(before)
    switch.finish(head)  # the copy first: the original must not see any of it
    assert sim.log.kept == before
    switch.finish(sim)
    assert _outcome(sim, sim.log.kept or []) == _uninterrupted(case)


def _other(config: CompiledConfig) -> CompiledConfig:
    """``config`` with its first team's absolute share and entitlement halved."""
    first = next(n for n in config.nodes if n.leaf)
    half = dataclasses.replace(first, absolute={c: v / 2 for c, v in first.absolute.items()},
                               entitlement_gpus={c: v / 2 for c, v in first.entitlement_gpus.items()})
    nodes = tuple(half if n is first else n for n in config.nodes)
    return dataclasses.replace(config, nodes=nodes)


@PROPS
@given(cases(), PAUSES)
def test_switching_to_the_same_config_changes_nothing(case: Case, at: float) -> None:
    """The scheduler rebuilt from the running and pending jobs decides as the one it replaces:
    a plan whose head equals its base stays clean."""
    config, _ = case
    sim = _start(case)
    switch.pause(sim, at)
    head = switch.switched(sim, config)
    head.log.kept = list(sim.log.kept or [])
    switch.finish(head)
    assert _outcome(head, head.log.kept) == _uninterrupted(case)


def _shares(a: int, b: int) -> CompiledConfig:
    return make_config({"a": a, "b": b}, nodes=2, gpus_per_node=8)


def _contended() -> Workload:
    from allotment.core.jobs import JobSpec

    jobs = [
        JobSpec(id=f"{team}{i:02d}", submit=600.0 * i, account=team, gpus=4, work=4 * 3600.0,
                user="u", min_runtime=600.0)
        for i in range(60) for team in ("a", "b")
    ]
    return Workload.of(sorted(jobs, key=lambda j: (j.submit, j.id)), ())


def _preempting() -> Workload:
    """Team b's unallocated work fills the cluster; a's budgeted jobs take it back all day."""
    from allotment.core.jobs import JobSpec

    jobs = [JobSpec(id=f"b{i:02d}", submit=0.0, account="b", gpus=2, work=20 * 3600.0, user="u",
                    min_runtime=0.0, resumable=True, checkpoint_interval=600.0) for i in range(8)]
    jobs += [JobSpec(id=f"a{i:02d}", submit=3600.0 + 1800.0 * i, account="a", gpus=4, work=2 * 3600.0,
                     user="u", min_runtime=600.0) for i in range(40)]
    return Workload.of(sorted(jobs, key=lambda j: (j.submit, j.id)), ())


def test_a_switched_run_keeps_the_past_and_follows_the_new_shares_after() -> None:
    base, head = _shares(1, 1), _shares(3, 1)
    assert switch_refusal(base, head, base.largest_cluster()) is None
    at = 6 * 3600.0
    sim = switch.start(base, _contended(), cluster=base.largest_cluster(), days=1.0)
    sim.log.kept = []
    switch.pause(sim, at)
    past = list(sim.log.kept)
    moved = switch.switched(sim, head)
    moved.log.kept = list(past)
    switch.finish(moved)
    switch.finish(sim)
    assert moved.log.kept[: len(past)] == past  # the warm-up is the base's
    assert sim.log.kept[: len(past)] == past
    assert moved.rec.header.entitlement_gpus["a"] > sim.rec.header.entitlement_gpus["a"]

    def ran(s: _Sim, team: str) -> float:
        return sum(s.rec.team_charged[team].hour(h) for h in range(6, 24))

    assert ran(moved, "a") > ran(sim, "a")  # after the switch, a's larger share shows


def test_under_a_backend_latency_profile_a_switch_to_the_same_config_changes_nothing() -> None:
    """Slurm's requeue delay keeps preempted jobs in the event queue, out of the scheduler,
    and its launch delay keeps started jobs there too: both cross the switch."""
    from allotment.sim.latency import PROFILES

    config = _shares(1, 1)
    cl = config.largest_cluster()
    slurm = PROFILES["slurm"]

    def run(at: float | None, waiting: int = -1) -> tuple[list[Event], str]:
        sim = switch.start(config, _preempting(), cluster=cl, days=1.0, latency=slurm)
        sim.log.kept = []
        if at is not None:
            switch.pause(sim, at)
            assert any(e.kind == waiting for e in sim.heap)
            copy = switch.switched(sim, config)
            copy.log.kept = list(sim.log.kept)
            sim = copy
        switch.finish(sim)
        return _outcome(sim, sim.log.kept or [])

    plain = run(None)
    preempted = next(e.t for e in plain[0] if e.event == "preempt")
    started = next(e.t for e in plain[0] if e.event == "start" and e.t > preempted)
    assert run(preempted + 60.0, BACK) == plain  # requeued, not yet eligible again
    assert run(started - 0.5, LAUNCH) == plain  # placed, not yet launched


def test_what_a_switch_cannot_carry_over_is_refused() -> None:
    base = _shares(1, 1)
    cl = base.largest_cluster()
    assert switch_refusal(base, make_config({"a": 1, "b": 1, "c": 1}, nodes=2, gpus_per_node=8), cl) == "the teams differ"
    assert switch_refusal(base, make_config({"a": 1, "b": 1}, nodes=3, gpus_per_node=8), cl) is not None
    assert switch_refusal(base, base, cl, (("a", "x"),)) == "teams are renamed"
    longer = dataclasses.replace(base.policy, lookback_s=base.policy.lookback_s * 2)
    assert switch_refusal(base, make_config({"a": 1, "b": 1}, nodes=2, gpus_per_node=8, policy=longer), cl) is not None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), PAUSES)
def test_a_run_of_a_trace_file_switched_to_the_same_config_is_the_run_of_the_workload_in_memory(
    case: Case, at: float
) -> None:
    """The file's source is forked at the pause (``traces/trace_stream.py``): the copy reads on
    from where the run stood, and the paused run too, both as the workload held whole."""
    import tempfile
    from pathlib import Path

    from allotment.traces.trace_stream import trace_stream
    from allotment.traces.writer import sorted_items, write_trace

    config, workload = case
    # a trace refuses a deadline before the job's submission (the strategy draws some)
    workload = dataclasses.replace(workload, jobs=tuple(
        dataclasses.replace(j, deadline=None) if j.deadline is not None and j.deadline < j.submit else j
        for j in workload.jobs))
    case = (config, workload)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        write_trace(path, sorted_items(workload.jobs, workload.node_events))
        sim = switch.start(config, trace_stream(path), cluster=config.largest_cluster(), days=1.0)
        sim.log.kept = []
        switch.pause(sim, at)
        head = switch.switched(sim, config)
        head.log.kept = list(sim.log.kept)
        switch.finish(head)
        switch.finish(sim)
    want = _uninterrupted(case)
    assert _outcome(head, head.log.kept) == want
    assert _outcome(sim, sim.log.kept) == want
