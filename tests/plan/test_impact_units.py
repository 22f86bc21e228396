"""Units of simulation work: each seed's workload generated once for both sides, the work spread
evenly, and the same metrics as the reference (every run alone, generating its own workload)."""

from __future__ import annotations

import json
import os
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import allotment.sim.runner
import allotment.sim.switch
from allotment.plan import forked, impact_units
from allotment.plan.executors.local import processes
from allotment.plan.executors.protocol import ExecTask
from allotment.plan.impact import ImpactRunner
from allotment.plan.impact_units import Task, by_seed, makespan, one_per_run
from allotment.plan.model import Impact
from allotment.plan.simcache import SimCache
from tests.plan.factory import N, build

BASE = build("acme", N(children={"a": N(), "b": N(), "c": N()}), gpus=16)
HEAD = build("acme", N(children={"a": N(3), "b": N(), "c": N()}), gpus=16)


def _runner(
    seeds: tuple[int, ...], workers: int, grouping: Any = by_seed, cache: SimCache | None = None
) -> ImpactRunner:
    return ImpactRunner(
        trace=None,
        scenario="ai2",
        cluster=None,
        days=0.2,
        seeds=seeds,
        cache=cache or SimCache(None),
        workers=workers,
        grouping=grouping,
    )


def _count_generations(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    calls: Counter[int] = Counter()
    real = impact_units.generate

    def counted(*args: Any) -> Any:
        calls[args[-1]] += 1  # the seed
        return real(*args)

    monkeypatch.setattr(impact_units, "generate", counted)
    return calls


def test_both_sides_of_a_seed_replay_one_generated_workload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _count_generations(monkeypatch)
    imp = _runner((1, 2), workers=1)(BASE, HEAD)
    assert isinstance(imp, Impact) and imp.total_runs == 4
    assert calls == Counter({1: 1, 2: 1})
    ref = _count_generations(monkeypatch)
    _runner((1, 2), workers=1, grouping=one_per_run)(BASE, HEAD)
    assert ref == Counter({1: 2, 2: 2})  # the reference generates it for each side


def _entries(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "plan").glob("*.json"))}


def test_both_sides_of_a_seed_share_one_warm_up_under_the_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The head is switched in after the base's warm-up (sim/switch.py): one simulation starts
    per seed, not one per side, and the head's metrics are those of that switched run."""
    started: Counter[str] = Counter()
    real = allotment.sim.switch.start

    def counted(config: Any, *args: Any, **kwargs: Any) -> Any:
        started["base" if config is BASE else "head"] += 1
        return real(config, *args, **kwargs)

    monkeypatch.setattr(allotment.sim.switch, "start", counted)
    imp = _runner((1, 2), workers=1)(BASE, HEAD)
    assert isinstance(imp, Impact) and imp.total_runs == 4
    assert started == Counter({"base": 2})


@pytest.mark.parametrize("workers", [1, 2, 6])
def test_grouped_runs_give_the_reference_metrics(workers: int, tmp_path: Path) -> None:
    """Three seeds as pairs (one worker, or two cores shared by three processes) or as six
    single runs (six cores): every grouping and the reference must agree, every run's metrics
    to the byte (as cached)."""
    ref = _runner((1, 2, 3), 1, one_per_run, SimCache(tmp_path / "ref"))(BASE, HEAD)
    got = _runner((1, 2, 3), workers, by_seed, SimCache(tmp_path / "got"))(BASE, HEAD)
    assert isinstance(ref, Impact) and isinstance(got, Impact)
    assert got == ref
    runs = _entries(tmp_path / "ref")
    assert len(runs) == 6 and _entries(tmp_path / "got") == runs
    metrics = {json.dumps(json.loads(b)["metrics"], sort_keys=True) for b in runs.values()}
    assert len(metrics) == 6  # every seed and side really differs: jobs ran


class _HereWith:
    """An executor that runs every unit in this process, grouping as for ``parallelism`` cores."""

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism

    def run(self, fn: Any, tasks: list[ExecTask]) -> Any:
        for i, t in enumerate(tasks):
            yield i, fn(t.arg)


@pytest.mark.skipif(not forked.can_fork(), reason="needs os.fork, one thread")
def test_a_head_forked_from_the_paused_warm_up_gives_the_copys_metrics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With cores to spare each pair's head runs in a forked child from the paused run
    (plan.forked), with one core in a copy of it (sim.switch.switched): the same runs, every
    one to the byte, and the reference's (every run alone)."""
    forks: list[int] = []
    real = forked.start

    def counted(fn: Any) -> Any:
        forks.append(1)
        return real(fn)

    monkeypatch.setattr(forked, "start", counted)

    def plan(parallelism: int, folder: str, grouping: Any = by_seed) -> Any:
        runner = _runner((1, 2), 1, grouping, SimCache(tmp_path / folder))
        runner.executor = _HereWith(parallelism)
        return runner(BASE, HEAD)

    copied = plan(1, "copied")
    assert forks == []
    fork = plan(2, "forked")
    assert len(forks) == 2  # one a seed
    ref = plan(2, "ref", one_per_run)
    assert len(forks) == 2  # a unit of one run has nothing to fork for
    assert fork == copied == ref
    runs = _entries(tmp_path / "copied")
    assert len(runs) == 4 and _entries(tmp_path / "forked") == runs == _entries(tmp_path / "ref")


@pytest.mark.skipif(not forked.can_fork(), reason="needs os.fork, one thread")
def test_when_the_base_side_fails_its_forked_head_is_stopped_and_the_error_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = os.getpid()
    real = impact_units._metrics

    def fail_here(sim: Any, warmup_s: float) -> Any:
        if os.getpid() == here:  # the base side, in this process; the forked head runs on
            raise RuntimeError("the base side failed")
        return real(sim, warmup_s)

    monkeypatch.setattr(impact_units, "_metrics", fail_here)
    children: list[int] = []
    start = forked.start

    def recorded(fn: Any) -> Any:
        child = start(fn)
        children.append(child.pid)
        return child

    monkeypatch.setattr(forked, "start", recorded)
    runner = _runner((1, 2), 1)  # two pairs on two cores: no seed split, each head forked
    runner.executor = _HereWith(2)
    with pytest.raises(RuntimeError, match="the base side failed"):
        runner(BASE, HEAD)
    assert len(children) == 1  # the first unit's head; the plan stopped at its base
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)  # not left behind, running or a zombie: reaped


def test_a_fully_cached_plan_neither_generates_nor_simulates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = SimCache(tmp_path / "cache")
    first = _runner((1, 2), workers=1, cache=cache)(BASE, HEAD)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a warm plan must not generate or simulate")

    monkeypatch.setattr(impact_units, "generate", refuse)
    monkeypatch.setattr(allotment.sim.runner, "simulate", refuse)
    monkeypatch.setattr(allotment.sim.switch, "start", refuse)
    again = _runner((1, 2), workers=2, cache=cache)(BASE, HEAD)
    assert isinstance(again, Impact) and isinstance(first, Impact)
    assert again.cached_runs == again.total_runs == 4
    assert again.teams == first.teams


def test_five_seeds_on_two_cores_run_as_five_pairs_at_once_and_no_seed_is_simulated_twice() -> None:
    """Since stop 41 the local pool runs every unit at once on its cores (executors.local): the
    five pairs end together, in the total work over two cores.  Splitting seed 5 (the old
    way, on a pool of two processes) generates its workload and simulates its warm-up twice."""
    tasks = [Task(side, seed, f"{side}{seed}") for seed in range(1, 6) for side in ("base", "head")]
    groups = by_seed(tasks, 2)
    assert [len(g) for g in groups] == [2] * 5
    assert [g[0].seed for g in groups] == [1, 2, 3, 4, 5]
    assert processes(len(groups), 2) == 5
    assert makespan(groups, 2) == Fraction(5 * 19, 2)  # a pair: 1 generation + 3 windows of 6
    split = [*groups[:4], *((t,) for t in groups[4])]
    assert makespan(split, 2) == Fraction(4 * 19 + 2 * 13, 2) > makespan(groups, 2)
    assert [len(g) for g in by_seed(tasks, 1)] == [2] * 5  # one worker: nothing to balance
    assert makespan(by_seed(tasks, 1), 1) == 5 * 19
    assert [len(g) for g in by_seed(tasks, 10)] == [1] * 10  # a core each (a Slurm array)


def _tasks(draw_sides: list[int]) -> list[Task]:
    """Seed i+1 with its base run (bit 1) and/or head run (bit 2); some seeds fully cached."""
    out = []
    for i, bits in enumerate(draw_sides):
        out += [
            Task(side, i + 1, f"{side}{i + 1}")
            for b, side in ((1, "base"), (2, "head"))
            if bits & b
        ]
    return out


@given(st.lists(st.integers(0, 3), max_size=12), st.integers(1, 4))
def test_grouping_is_a_partition_by_seed_never_worse_than_one_run_per_task(
    sides: list[int], workers: int
) -> None:
    tasks = _tasks(sides)
    groups = by_seed(tasks, workers)
    assert sorted(t.key for g in groups for t in g) == sorted(t.key for t in tasks)
    assert all(len({t.seed for t in g}) == 1 for g in groups)
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)
    assert makespan(groups, workers) <= makespan(one_per_run(tasks, workers), workers)
    assert len(groups) <= len(tasks)  # never more generations than the reference
    if workers == 1:
        assert len(groups) == len({t.seed for t in tasks})
