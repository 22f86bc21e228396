"""Projected impact: the same workloads simulated under the base and the head config, per seed.

Common random numbers: for each seed one workload is generated (from the base config, or read
from ``--trace``) and replayed under both sides, so the difference ``head - base`` of one seed
holds the change's effect and little of the workload's luck; ``impact_stats`` turns the
differences over the seeds into a mean and a 90% interval.

"The same workload" needs care when the PR adds, removes or renames teams: jobs of a renamed
team keep running under its new name on the head side; a team new in head brings the jobs the
scenario generates for it on the head side; a job whose account does not exist on one side is
left out of that side only.

Each (side, seed) run is cached by content (``simcache``); the runs left are grouped into units
(``impact_units``: both sides of a seed on one generated workload, longest first) and simulated
by an executor (``plan.executors``): by default forked processes sharing ``allot plan
--workers`` cores (``WORKERS`` unless told; every unit at once, ``executors.local``), or a Slurm
job array; each run cached as soon as its unit ends.  Every
run is deterministic, so neither the executor, its size, the grouping nor the cache can change a
result.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.errors import TraceError
from allotment.plan import impact_units
from allotment.plan.diff import diff_configs
from allotment.plan.executors.local import LocalPool
from allotment.plan.executors.protocol import ExecTask, Executor
from allotment.plan.impact_stats import summarize
from allotment.plan.impact_units import Grouping, Setup, Task, Unit, by_seed, for_side
from allotment.plan.ledger_history import cluster_weight, is_ledger, ledger_to_trace
from allotment.plan.model import Impact
from allotment.plan.simcache import SimCache
from allotment.plan.workload_setting import where
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.switchable import switch_refusal

__all__ = ["ImpactRunner", "Run", "code_sha256", "for_side"]

DEFAULT_DAYS = 7.0  # measured per seed after the warm-up; why and what it costs: docs/plan.md
DEFAULT_SCENARIO = "ai2-contended"  # every team wants more than its slice: docs/plan.md
WORKERS = 2  # ``allot plan --workers`` unless told: the CI runner and reference machine have two cores


@dataclass(frozen=True, slots=True)
class Run:
    """One side simulated on one seed's workload."""

    side: str  # "base" or "head"
    seed: int
    key: str
    metrics: Mapping[str, Any]
    cached: bool


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
        grouping: Grouping = by_seed,
        latency: LatencyProfile = NONE,
        progress: Callable[[int, int], None] | None = None,
        repo: Path | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.trace = trace
        self.repo = repo  # the config repository: where plan_workload is read from (base revision)
        self.scenario = scenario or DEFAULT_SCENARIO
        self.cluster = cluster
        self.days = days
        self.seeds = seeds  # None: seeds 1..plan_seeds of the base revision's policy
        self.cache = cache or SimCache(None)
        self.workers = workers
        self.executor: Executor = executor or LocalPool(workers)
        self.note = note
        self.grouping = grouping  # impact_units.one_per_run is the plain reference
        self.latency = latency  # the backend's delays, both sides alike (sim/latency.py)
        # told (runs done, runs in all) as the cache is read and as each unit ends; the CLI's bar
        self.progress = progress or (lambda done, total: None)

    def __call__(self, base: CompiledConfig, head: CompiledConfig) -> Impact:
        cluster = self.cluster or base.largest_cluster()
        trace = self.trace if self.trace is not None else self._history(base, cluster)
        # the knob is read from the base side: a pull request cannot shrink its own noise band
        seeds = self.seeds or tuple(range(1, base.policy.plan_seeds + 1))
        if trace is not None:
            seeds = seeds[:1]  # a trace is one workload
        renames = tuple(diff_configs(base, head).renamed)
        warmup = warmup_days(base, cluster)
        if trace is not None:
            recipe: dict[str, Any] = {"trace": hashlib.sha256(_read_bytes(trace)).hexdigest()}
            # a trace's first lookback window is its warm-up; a trace too short for one has none
            span = _trace_days(trace)
            warmup = warmup if span > 2 * warmup else 0.0
            days = self.days or max(1.0, span - warmup)
            label = f"trace {trace.name} on {cluster}"
        else:
            recipe = {"scenario": self.scenario, "generated_from": base.inputs_sha256}
            days = self.days or DEFAULT_DAYS
            label = f"scenario {self.scenario} on {cluster}"
        common = {**recipe, "at": base.at.isoformat(), "cluster": cluster, "days": days}
        common["warmup_days"] = warmup
        common["code"] = code_sha256()
        common["latency"] = self.latency.key()  # a metric under another profile is another run
        # the head switched in after the base's warm-up, where the switch carries everything over
        switch = warmup > 0 and switch_refusal(base, head, cluster, renames) is None
        tasks = []
        for seed in seeds:
            for side, cfg in (("base", base), ("head", head)):
                fields = {**common, "seed": seed, "side": cfg.inputs_sha256}
                if side == "head":
                    fields["renames"] = [list(p) for p in renames]
                    if switch:  # its warm-up was the base's
                        fields["warmed_up_under"] = base.inputs_sha256
                tasks.append(Task(side, seed, _key(fields)))
        setup = Setup(
            base, head, renames, cluster, days, self.scenario, trace, self.latency, warmup, switch
        )
        runs = self._run(setup, tasks)
        return summarize(
            base, head, runs, workload=label, workload_key=_key(common), days=days,
            seeds=seeds, cluster=cluster, note=self.note, latency_profile=self.latency.spec(),
            warmup_days=warmup, warmed_under_base=switch,
        )

    def _history(self, base: CompiledConfig, cluster: str) -> Path | None:
        """The organisation's own history when the base revision names one (``plan_workload``
        in ``policies/scheduler.yaml``): the file as committed in the *base* revision, so a pull
        request can change neither which history is replayed nor its content.  Written once per
        content into a folder of the system's temporary directory.  A canonical trace (an
        ``sacct`` export) is replayed as it is; a snapshot of the reconciler's ledger (an SQLite
        file) as the trace ``plan.ledger_history`` makes of it."""
        name = base.policy_for(cluster).plan_workload
        repo_path, revision = self.repo, base.revision
        if name is None or revision is None or repo_path is None:
            return None
        import git

        try:
            repo = git.Repo(repo_path, search_parent_directories=True)
            data = (repo.commit(revision).tree / name).data_stream.read()
        except (KeyError, ValueError, git.GitError) as exc:
            raise TraceError(
                f"{where(repo_path, revision, cluster)}: plan_workload {name!r} is not a file "
                f"of the base revision {revision[:12]}"
            ) from exc
        digest = hashlib.sha256(data).hexdigest()
        folder = Path(tempfile.gettempdir()) / "allotment-plan-history" / digest
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / Path(name).name
        if not path.exists():
            path.write_bytes(data)
        if not is_ledger(data):
            return path
        # a snapshot of the reconciler's ledger: replayed as the trace it converts to, in the
        # GPUs of the base's billing weight for the cluster (plan/ledger_history.py); converted
        # on every plan (cheap, atomic), so a newer converter never meets an older conversion
        # the comment names it "trace ledger.db.jsonl": the trace made of the committed ledger.db
        weight = cluster_weight(base, cluster, lambda: where(repo_path, revision, cluster))
        trace = folder / f"weight-{weight:g}" / f"{Path(name).name}.jsonl"
        trace.parent.mkdir(exist_ok=True)
        ledger_to_trace(path, weight, trace)
        return trace

    def _run(self, setup: Setup, tasks: list[Task]) -> list[Run]:
        """Cached runs are read (and their workloads never generated); the rest are simulated in
        units, in worker processes when there is more than one, and cached as each unit ends."""
        done: dict[str, Mapping[str, Any]] = {}
        for t in tasks:
            hit = self.cache.get(t.key)
            if hit is not None:
                done[t.key] = hit
        cached = set(done)
        self.progress(len(done), len(tasks))
        todo = impact_units.units(
            setup, [t for t in tasks if t.key not in done], self.executor.parallelism, self.grouping
        )
        for u, metrics in self._simulate(todo):
            for t, m in zip(u.tasks, metrics, strict=True):
                done[t.key] = m
                self.cache.put(t.key, m)
            self.progress(len(done), len(tasks))
        return [Run(t.side, t.seed, t.key, done[t.key], t.key in cached) for t in tasks]

    def _simulate(self, todo: list[Unit]) -> Iterator[tuple[Unit, tuple[dict[str, Any], ...]]]:
        """Each unit with its metrics, as units end, from the executor; a unit is named by its
        runs' keys.  ``impact_units.run_unit`` is looked up at call time, so a benchmark can wrap
        it (benchmarks/plan_bench.py)."""
        work = [ExecTask(unit_key(u), u, f"seed {u.seed}, {'+'.join(t.side for t in u.tasks)}")
                for u in todo]
        for i, metrics in self.executor.run(impact_units.run_unit, work):
            yield todo[i], tuple(metrics)


def unit_key(u: Unit) -> str:
    """A unit's content-addressed name: its run's cache key, or the digest of its runs' keys in
    order when it holds both sides of a seed."""
    if len(u.tasks) == 1:
        return u.tasks[0].key
    return hashlib.sha256("\n".join(t.key for t in u.tasks).encode()).hexdigest()


def warmup_days(base: CompiledConfig, cluster: str) -> float:
    """One lookback window of the base side, in whole hours (``sim.window`` measures from a
    whole hour): by then every team's window holds only usage of the steady state, none of the
    start from an empty window.  Read from the base, like the seeds: a pull request cannot
    shorten its own warm-up."""
    lookback_s = base.policy_for(cluster).lookback_s
    return math.ceil(lookback_s / 3600.0) / 24.0


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
