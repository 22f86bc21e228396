"""Projected impact: the same workloads simulated under the base and the head config, per seed.

Common random numbers: for each seed one workload is generated (from the base config, or read
from ``--trace``) and replayed under both sides, so the difference ``head - base`` of one seed
holds the change's effect and little of the workload's luck; ``impact_stats`` turns the
differences over the seeds into a mean and a 90% interval.

"The same workload" needs care when the PR adds, removes or renames teams: jobs of a renamed
team keep running under its new name on the head side; a team new in head brings the jobs the
scenario generates for it on the head side; a job whose account does not exist on one side is
left out of that side only.

Each (side, seed) run is cached by content (``simcache``), and the runs left are simulated in a
pool of ``WORKERS`` processes; every run is deterministic, so neither the pool nor the cache can
change a result.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.jobs import JobSpec
from allotment.errors import TraceError
from allotment.plan.diff import diff_configs
from allotment.plan.impact_stats import summarize
from allotment.plan.model import Impact
from allotment.plan.simcache import SimCache
from allotment.traces.scenarios import Workload, get_scenario

DEFAULT_DAYS = 5.0  # per seed: five 5-day pairs fit the 60 s budget in pure Python (docs/benchmarks.md)
DEFAULT_SCENARIO = "ai2"
WORKERS = 2  # the CI runner and the reference machine have two cores


@dataclass(frozen=True, slots=True)
class Run:
    """One side simulated on one seed's workload."""

    side: str  # "base" or "head"
    seed: int
    key: str
    metrics: Mapping[str, Any]
    cached: bool


@dataclass(frozen=True, slots=True)
class Task:
    """What a worker needs to generate one seed's workload and simulate one side of it."""

    side: str
    seed: int
    key: str
    config: CompiledConfig
    base: CompiledConfig
    head: CompiledConfig
    renames: tuple[tuple[str, str], ...]
    cluster: str
    days: float
    scenario: str
    trace: Path | None


@cache
def code_sha256() -> str:
    """Hash of the tool version and the simulator, core and workload sources: a changed
    simulator is a cache miss."""
    import allotment.core
    import allotment.sim
    import allotment.traces

    h = hashlib.sha256(allotment.__version__.encode())
    for pkg in (allotment.core, allotment.sim, allotment.traces):
        root = Path(next(iter(pkg.__path__)))
        for f in sorted(root.rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def for_side(w: Workload, config: CompiledConfig, renames: Mapping[str, str]) -> Workload:
    """The jobs ``config`` can run: accounts renamed, unknown accounts left out."""
    leaves = {n.name for n in config.leaves()}
    jobs: list[JobSpec] = []
    for j in w.jobs:
        account = renames.get(j.account, j.account)
        if account in leaves:
            jobs.append(j if account == j.account else replace(j, account=account))
    return Workload(tuple(jobs), w.node_events)


class ImpactRunner:
    """Callable ``(base, head) -> Impact`` configured once from the command line."""

    def __init__(
        self,
        *,
        trace: Path | None,
        scenario: str | None,
        cluster: str | None,
        days: float | None,
        seeds: tuple[int, ...] | None = None,
        cache: SimCache | None = None,
        workers: int = WORKERS,
        note: str = "",
    ) -> None:
        self.trace = trace
        self.scenario = scenario or DEFAULT_SCENARIO
        self.cluster = cluster
        self.days = days
        self.seeds = seeds  # None: seeds 1..plan_seeds of the base revision's policy
        self.cache = cache or SimCache(None)
        self.workers = workers
        self.note = note

    def __call__(self, base: CompiledConfig, head: CompiledConfig) -> Impact:
        cluster = self.cluster or base.largest_cluster()
        # the knob is read from the base side: a pull request cannot shrink its own noise band
        seeds = self.seeds or tuple(range(1, base.policy.plan_seeds + 1))
        if self.trace is not None:
            seeds = seeds[:1]  # a trace is one workload
        renames = tuple(diff_configs(base, head).renamed)
        if self.trace is not None:
            recipe: dict[str, Any] = {"trace": hashlib.sha256(_read_bytes(self.trace)).hexdigest()}
            days = self.days or _trace_days(self.trace)
            label = f"trace {self.trace.name} on {cluster}"
        else:
            recipe = {"scenario": self.scenario, "generated_from": base.inputs_sha256}
            days = self.days or DEFAULT_DAYS
            label = f"scenario {self.scenario} on {cluster}"
        common = {**recipe, "at": base.at.isoformat(), "cluster": cluster, "days": days}
        common["code"] = code_sha256()
        tasks = []
        for seed in seeds:
            for side, cfg in (("base", base), ("head", head)):
                fields = {**common, "seed": seed, "side": cfg.inputs_sha256}
                if side == "head":
                    fields["renames"] = [list(p) for p in renames]
                task = Task(
                    side, seed, _key(fields), cfg, base, head, renames, cluster, days,
                    self.scenario, self.trace,
                )
                tasks.append(task)
        runs = self._run(tasks)
        return summarize(
            base, head, runs, workload=label, workload_key=_key(common), days=days,
            seeds=seeds, cluster=cluster, note=self.note,
        )

    def _run(self, tasks: list[Task]) -> list[Run]:
        """Cached runs are read (and their workloads never generated); the rest are simulated,
        in worker processes when there is more than one."""
        done: dict[str, Mapping[str, Any]] = {}
        for t in tasks:
            hit = self.cache.get(t.key)
            if hit is not None:
                done[t.key] = hit
        cached = set(done)
        todo = [t for t in tasks if t.key not in done]
        if len(todo) > 1 and self.workers > 1:
            # fork: the CLI is single-threaded here, and spawn would re-run the caller's
            # __main__ (a script without a main guard would recurse)
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
            ctx = multiprocessing.get_context(method)
            with ProcessPoolExecutor(max_workers=min(self.workers, len(todo)), mp_context=ctx) as pool:
                for t, metrics in zip(todo, pool.map(run_task, todo), strict=True):
                    done[t.key] = metrics
        else:
            for t in todo:
                done[t.key] = run_task(t)
        for t in todo:
            self.cache.put(t.key, done[t.key])
        return [Run(t.side, t.seed, t.key, done[t.key], t.key in cached) for t in tasks]


def run_task(t: Task) -> dict[str, Any]:
    """One side on one seed's workload, JSON-normalized (module level: a worker runs it)."""
    from allotment.sim.runner import simulate

    w = for_side(_workload(t), t.config, dict(t.renames) if t.side == "head" else {})
    result = simulate(t.config, w, cluster=t.cluster, days=t.days, seed=t.seed, policy="budgets")
    metrics = dict(result.metrics)
    metrics.pop("sim_seconds", None)  # wall time: the one output that differs between runs
    normalized: dict[str, Any] = json.loads(json.dumps(metrics, sort_keys=True))
    return normalized


def _workload(t: Task) -> Workload:
    if t.trace is not None:
        from allotment.traces.canonical import read_trace

        tr = read_trace(t.trace)
        return Workload.of(tr.jobs, tr.node_events)
    return _generate(t.scenario, t.base, t.head, t.renames, t.cluster, t.days, t.seed)


def _generate(
    scenario: str,
    base: CompiledConfig,
    head: CompiledConfig,
    renames: tuple[tuple[str, str], ...],
    cluster: str,
    days: float,
    seed: int,
) -> Workload:
    """The scenario's workload for ``base``, plus the jobs of teams new in ``head``."""
    gen = get_scenario(scenario)
    w: Workload = gen(base, cluster=cluster, days=days, seed=seed)
    new_teams = {n.name for n in head.leaves()} - {n.name for n in base.leaves()}
    new_teams -= {new for _, new in renames}
    if new_teams and cluster in head.clusters:
        extra: Workload = gen(head, cluster=cluster, days=days, seed=seed)
        w = Workload.of(w.jobs + tuple(j for j in extra.jobs if j.account in new_teams), w.node_events)
    return w


def _key(fields: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror}") from exc


def _trace_days(path: Path) -> float:
    from allotment.traces.canonical import read_trace

    last = max((j.submit for j in read_trace(path).jobs), default=0.0)
    return max(1.0, last / 86400.0)
