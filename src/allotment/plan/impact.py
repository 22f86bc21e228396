"""Projected impact: the same workload simulated under the base and the head config.

"The same workload" needs care when the PR adds, removes or renames teams.  The workload is what
people will submit whatever the budget says, so it is generated once from the base config (or
read from ``--trace``); jobs of a renamed team keep running under its new name on the head side;
a team new in head brings the jobs the scenario generates for it on the head side; a job whose
account does not exist on one side is left out of that side only.  Both sides then use the same
seed.

Each side's metrics are cached by content hash (compiled inputs, the exact jobs that side runs,
cluster, days, seed, and the simulator's own source), so a budget-only PR re-simulates only the
side that changed, and re-running a plan costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.jobs import JobSpec
from allotment.errors import TraceError
from allotment.plan.diff import diff_configs
from allotment.plan.model import Impact, TeamImpact
from allotment.traces.scenarios import Workload, get_scenario

DEFAULT_DAYS = 30.0
DEFAULT_SCENARIO = "ai2"
WEEK_DAYS = 7.0


@dataclass(frozen=True, slots=True)
class SideRun:
    metrics: Mapping[str, Any]
    cached: bool


def _code_sha256() -> str:
    """Hash of the simulator, scheduling core and workload generator sources: a changed
    simulator is a cache miss."""
    import allotment.core
    import allotment.sim
    import allotment.traces

    h = hashlib.sha256()
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
        seed: int,
        cache_dir: Path | None,
        parallel: bool = True,
    ) -> None:
        self.trace = trace
        self.scenario = scenario or DEFAULT_SCENARIO
        self.cluster = cluster
        self.days = days
        self.seed = seed
        self.cache_dir = cache_dir
        self.parallel = parallel
        self._code = _code_sha256()

    def __call__(self, base: CompiledConfig, head: CompiledConfig) -> Impact:
        cluster = self.cluster or base.largest_cluster()
        renames = dict(diff_configs(base, head).renamed)
        if self.trace is not None:
            from allotment.traces.canonical import read_trace

            trace_bytes = _read_bytes(self.trace)
            t = read_trace(self.trace)
            loaded = Workload.of(t.jobs, t.node_events)
            days = self.days or _trace_days(loaded)
            label = f"trace {self.trace.name}"
            recipe = {"trace": hashlib.sha256(trace_bytes).hexdigest()}

            def workload() -> Workload:
                return loaded
        else:
            days = self.days or DEFAULT_DAYS
            label = f"scenario {self.scenario} on {cluster}"
            recipe = {"scenario": self.scenario, "generated_from": base.inputs_sha256}

            def workload() -> Workload:
                return self._generate(base, head, renames, cluster, days)

        common = {
            **recipe,
            "at": base.at.isoformat(),
            "cluster": cluster,
            "days": days,
            "seed": self.seed,
            "code": self._code,
        }
        keys = (
            _key({**common, "side": base.inputs_sha256}),
            _key({**common, "side": head.inputs_sha256, "renames": sorted(renames.items())}),
        )
        runs = self._run_sides(
            [(base, {}, keys[0]), (head, renames, keys[1])], workload, cluster, days
        )
        return _impact(base, head, runs[0], runs[1], label, _key(common), days, self.seed)

    def _generate(
        self,
        base: CompiledConfig,
        head: CompiledConfig,
        renames: Mapping[str, str],
        cluster: str,
        days: float,
    ) -> Workload:
        """The scenario's workload for ``base``, plus the jobs of teams new in ``head``."""
        gen = get_scenario(self.scenario)
        w: Workload = gen(base, cluster=cluster, days=days, seed=self.seed)
        new_teams = {n.name for n in head.leaves()} - {n.name for n in base.leaves()}
        new_teams -= set(renames.values())
        if new_teams and cluster in head.clusters:
            extra: Workload = gen(head, cluster=cluster, days=days, seed=self.seed)
            w = Workload.of(
                w.jobs + tuple(j for j in extra.jobs if j.account in new_teams), w.node_events
            )
        return w

    def _run_sides(
        self,
        sides: list[tuple[CompiledConfig, Mapping[str, str], str]],
        workload: Callable[[], Workload],
        cluster: str,
        days: float,
    ) -> list[SideRun]:
        """Cached sides are read, and then the workload is not even generated; the others are
        simulated, in parallel processes when both are missing (each run is deterministic, so
        parallelism cannot change a result)."""
        paths = [
            self.cache_dir / "plan" / f"{key}.json" if self.cache_dir is not None else None
            for _, _, key in sides
        ]
        runs = [_read_cache(p) for p in paths]
        todo = [i for i, r in enumerate(runs) if r is None]
        results: dict[int, dict[str, Any]] = {}
        if todo:
            w = workload()
            jobs = {i: (sides[i][0], for_side(w, sides[i][0], sides[i][1])) for i in todo}
            if len(todo) > 1 and self.parallel:
                # fork: the CLI is single-threaded at this point, and spawn would re-run the
                # caller's __main__ (a script without a main guard would recurse)
                method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
                ctx = multiprocessing.get_context(method)
                with ProcessPoolExecutor(max_workers=len(todo), mp_context=ctx) as pool:
                    futures = {
                        i: pool.submit(_simulate, cfg, sw, cluster, days, self.seed)
                        for i, (cfg, sw) in jobs.items()
                    }
                    results = {i: f.result() for i, f in futures.items()}
            else:
                results = {
                    i: _simulate(cfg, sw, cluster, days, self.seed) for i, (cfg, sw) in jobs.items()
                }
        out: list[SideRun] = []
        for i, run in enumerate(runs):
            if run is None:
                path = paths[i]
                if path is not None:
                    _write_atomic(path, json.dumps(results[i], sort_keys=True))
                run = SideRun(results[i], False)
            out.append(run)
        return out


def _key(fields: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror}") from exc


def _read_cache(path: Path | None) -> SideRun | None:
    if path is None:
        return None
    try:
        return SideRun(json.loads(path.read_text(encoding="utf-8")), True)
    except (OSError, ValueError):
        return None  # missing or corrupt: recompute


def _simulate(
    cfg: CompiledConfig, w: Workload, cluster: str, days: float, seed: int
) -> dict[str, Any]:
    """One side's metrics, JSON-normalized (module level so a worker process can run it)."""
    from allotment.sim.runner import simulate

    result = simulate(cfg, w, cluster=cluster, days=days, seed=seed, policy="budgets")
    metrics = dict(result.metrics)
    metrics.pop("sim_seconds", None)  # wall time: the one output that differs between runs
    normalized: dict[str, Any] = json.loads(json.dumps(metrics, sort_keys=True))
    return normalized


def _trace_days(w: Workload) -> float:
    last = max((j.submit for j in w.jobs), default=0.0)
    return max(1.0, last / 86400.0)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _num(d: Mapping[str, Any] | None, *path: str) -> float | None:
    cur: Any = d
    for k in path:
        if not isinstance(cur, Mapping) or k not in cur:
            return None
        cur = cur[k]
    return float(cur) if isinstance(cur, (int, float)) and not isinstance(cur, bool) else None


def _impact(
    base: CompiledConfig,
    head: CompiledConfig,
    b: SideRun,
    h: SideRun,
    label: str,
    wkey: str,
    days: float,
    seed: int,
) -> Impact:
    threshold = head.policy.flag_delivered_drop
    bt: Mapping[str, Any] = b.metrics.get("teams", {})
    ht: Mapping[str, Any] = h.metrics.get("teams", {})
    renames = dict(diff_configs(base, head).renamed)
    back = {new: old for old, new in renames.items()}
    # the simulator reports the span it really ran; scale each side by its own span
    per_week_b = WEEK_DAYS / (_num(b.metrics, "days") or days)
    per_week_h = WEEK_DAYS / (_num(h.metrics, "days") or days)
    teams = []
    for team in sorted(set(ht) | {renames.get(t, t) for t in bt}):
        before = bt.get(back.get(team, team))
        after = ht.get(team)
        # GPU-hours the team's budgeted work ran (uncapped; "delivered" is capped hour by hour at owed)
        db = (_num(before, "received_gpu_hours") or 0.0) * per_week_b
        da = (_num(after, "received_gpu_hours") or 0.0) * per_week_h
        flagged = db > 0 and (db - da) / db > threshold
        teams.append(
            TeamImpact(
                team=team,
                delivered_week_before=db,
                delivered_week_after=da,
                ratio_before=_num(before, "ratio"),
                ratio_after=_num(after, "ratio"),
                p90_wait_before_s=_num(before, "wait", "p90"),
                p90_wait_after_s=_num(after, "wait", "p90"),
                flagged=flagged,
            )
        )
    return Impact(
        workload=label,
        workload_key=wkey,
        days=days,
        seed=seed,
        teams=tuple(teams),
        occupancy_before=_num(b.metrics, "occupancy"),
        occupancy_after=_num(h.metrics, "occupancy"),
        debug_p90_before_s=_num(b.metrics, "wait", "debug", "p90"),
        debug_p90_after_s=_num(h.metrics, "wait", "debug", "p90"),
        flag_threshold=threshold,
        cached=(b.cached, h.cached),
    )


def impact_function(
    *,
    repo: Path,
    trace: Path | None,
    scenario: str | None,
    days: float | None,
    seed: int,
    cache_dir: Path | None,
    cluster: str | None = None,
) -> ImpactRunner:
    return ImpactRunner(
        trace=trace,
        scenario=scenario,
        cluster=cluster,
        days=days,
        seed=seed,
        cache_dir=cache_dir if cache_dir is not None else repo / ".allot-cache",
    )
