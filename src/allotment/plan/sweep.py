"""A knob sweep: every combination of ``--set KNOB=V1,V2`` values on every seed's workload.

Common random numbers, as in a plan (``impact``): each seed's workload is generated once, here,
and every combination of knob values replays that very workload, so two rows of one seed differ
by the knobs alone.  Each (combination, seed) run is an independent task for an executor
(``plan.executors``: this machine's processes or a Slurm job array), named by its
content-addressed key (the code, the compiled inputs, the workload recipe, the seed and the knob
values), and deterministic: any executor gives the same rows.

Bad input is found before any work and reported all at once, one ``--set ...: what is wrong``
line each (``parse_grid``)."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.errors import UsageError
from allotment.plan.executors.protocol import ExecTask, Executor
from allotment.plan.impact import code_sha256
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.overrides import apply_overrides
from allotment.traces.scenarios import Workload


@dataclass(frozen=True, slots=True)
class Knob:
    """One swept knob as written on the command line, and its values in the order given."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """What every run of a sweep shares."""

    config: CompiledConfig
    cluster: str
    days: float | None  # None: a trace runs until every job is done
    scenario: str | None
    trace: Path | None
    policy: str = "budgets"
    latency: LatencyProfile = NONE


@dataclass(frozen=True, slots=True)
class SweepRun:
    """One task: the spec's workload of ``seed`` under the knob values ``overrides``."""

    spec: SweepSpec
    seed: int
    overrides: tuple[tuple[str, str], ...]
    workload: Workload


@dataclass(frozen=True, slots=True)
class Row:
    overrides: tuple[tuple[str, str], ...]
    seed: int
    key: str
    metrics: Mapping[str, Any]


def parse_grid(items: Sequence[str], config: CompiledConfig, cluster: str) -> tuple[Knob, ...]:
    """``KNOB=V1,V2,...`` items -> knobs; every knob and every value is checked against the
    policy of ``cluster`` (``sim.overrides``), and every problem reported at once."""
    policy = config.policy_for(cluster)
    knobs: list[Knob] = []
    errors: list[str] = []
    seen: set[str] = set()
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = tuple(v.strip() for v in text.split(","))
        if not sep or not key or not all(values):
            errors.append(f"--set {item}: expected KNOB=VALUE[,VALUE...], e.g. lookback=3d,7d")
            continue
        norm = key.replace("-", "_")
        if norm in seen:
            errors.append(f"--set {item}: {key} is set twice; list its values once, comma-separated")
            continue
        seen.add(norm)
        if len(set(values)) != len(values):
            errors.append(f"--set {item}: a value is listed twice")
        bad = False
        for v in values:
            try:
                apply_overrides(policy, {key: v})
            except UsageError as exc:
                msg = str(exc)
                if "unknown knob" in msg:
                    errors.append(msg.replace(f"--set {key}:", f"--set {item}:", 1))
                    bad = True
                    break
                errors.append(msg.replace(f"--set {key}:", f"--set {key}={v}:", 1))
                bad = True
        if not bad:
            knobs.append(Knob(key, values))
    if errors:
        raise UsageError("\n".join(errors))
    return tuple(knobs)


def combinations(knobs: Sequence[Knob]) -> list[tuple[tuple[str, str], ...]]:
    """Every combination of the knobs' values, the first knob slowest, values in given order."""
    return [tuple(zip((k.name for k in knobs), vs, strict=True))
            for vs in itertools.product(*(k.values for k in knobs))]


def run_key(spec: SweepSpec, seed: int, overrides: tuple[tuple[str, str], ...]) -> str:
    """The content-addressed name of one run: what its metrics are a function of."""
    recipe: dict[str, Any] = (
        {"scenario": spec.scenario} if spec.trace is None
        else {"trace": hashlib.sha256(spec.trace.read_bytes()).hexdigest()}
    )
    fields = {
        **recipe, "sweep": 1, "code": code_sha256(), "inputs": spec.config.inputs_sha256,
        "at": spec.config.at.isoformat(), "cluster": spec.cluster, "days": spec.days,
        "seed": seed, "policy": spec.policy, "latency": spec.latency.key(),
        "set": [list(p) for p in overrides],
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def workload_of(spec: SweepSpec, seed: int) -> Workload:
    """The workload every combination of ``seed`` replays: generated once per seed."""
    if spec.trace is not None:
        from allotment.sim.workloads import from_trace

        return from_trace(spec.trace, spec.config, spec.cluster)
    from allotment.sim.workloads import from_scenario

    assert spec.scenario is not None and spec.days is not None
    return from_scenario(spec.config, spec.scenario, cluster=spec.cluster, days=spec.days, seed=seed)


def run_one(r: SweepRun) -> dict[str, Any]:
    """Simulate one run; its metrics JSON-normalized (module level: an executor runs it)."""
    from allotment.sim.runner import simulate

    s = r.spec
    result = simulate(s.config, r.workload, cluster=s.cluster, days=s.days, seed=r.seed,
                      policy=s.policy, overrides=dict(r.overrides), latency=s.latency)
    out: dict[str, Any] = json.loads(json.dumps(result.metrics, sort_keys=True))
    return out


def sweep(
    spec: SweepSpec,
    knobs: Sequence[Knob],
    seeds: Sequence[int],
    executor: Executor,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> list[Row]:
    """Every (combination, seed) run through ``executor``; rows in combination, then seed order."""
    combos = combinations(knobs)
    work: list[ExecTask] = []
    for seed in seeds:
        w = workload_of(spec, seed)
        for c in combos:
            label = f"seed {seed}" + "".join(f", {k}={v}" for k, v in c)
            work.append(ExecTask(run_key(spec, seed, c), SweepRun(spec, seed, c, w), label))
    done: dict[int, dict[str, Any]] = {}
    progress(0, len(work))
    for i, metrics in executor.run(run_one, work):
        done[i] = metrics
        progress(len(done), len(work))
    rows = [Row(t.arg.overrides, t.arg.seed, t.key, done[i]) for i, t in enumerate(work)]
    order = {c: n for n, c in enumerate(combos)}
    return sorted(rows, key=lambda r: (order[r.overrides], r.seed))
