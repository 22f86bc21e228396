"""``impact_function``: an :class:`ImpactRunner` from the command line's choices and the
environment (where the cache lives, whether CI forbids it; see ``simcache``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from allotment.plan.executors.protocol import Executor
from allotment.plan.impact import WORKERS, ImpactRunner
from allotment.plan.simcache import SimCache, choose_cache
from allotment.sim.latency import NONE, LatencyProfile


def impact_function(
    *,
    repo: Path,
    trace: Path | None,
    scenario: str | None,
    days: float | None,
    seeds: tuple[int, ...] | None,
    cache_dir: Path | None,
    env: Mapping[str, str],
    cluster: str | None = None,
    latency: LatencyProfile = NONE,
    workers: int = WORKERS,
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
) -> ImpactRunner:
    choice = choose_cache(cache_dir, _repo_root(repo), env)
    return ImpactRunner(
        trace=trace,
        scenario=scenario,
        cluster=cluster,
        days=days,
        seeds=seeds,
        cache=SimCache(choice.folder),
        note=choice.note,
        latency=latency,
        workers=workers,
        progress=progress,
        repo=repo,
        executor=executor,
    )


def _repo_root(repo: Path) -> Path | None:
    """The work tree holding ``repo`` (its cache must not live inside), if any."""
    here = repo.resolve()
    for p in (here, *here.parents):
        if (p / ".git").exists():
            return p
    return None
