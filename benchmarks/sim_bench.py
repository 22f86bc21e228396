"""Simulator speed on the ai2 scenario of the bundled example, and how it grows with jobs.

Usage: .venv/bin/python benchmarks/sim_bench.py [--repo .] [--days 30] [--scales 1,4,16]
       [--base-days 2] [--repeat 3] [--policy budgets] [--scenario ai2]

``--scales ""`` skips the growth table.  Both wall and CPU time (``time.process_time``) are
printed: on a shared, loaded machine CPU time is the figure to compare.  ``--scenario
ai2-big-gangs`` times the workload that ``ai2`` was before its recalibration (2026-12-02), the one
every earlier figure in docs/benchmarks.md was measured on: a tree from before then times that
workload with ``--scenario ai2``.

First the headline: ``--days`` days of ai2 (wall time of simulate(), median of --repeat runs,
scenario generation excluded).  Then the growth: the scenario at 1x, 4x and 16x its base length
(``--base-days`` days, same cluster, so the job count scales with the factor); per-job time that
stays flat means linear cost, one that grows like log n means n log n.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.sim.runner import simulate
from allotment.traces.scenarios import get_scenario


def run(
    config: object, cluster: str, days: float, policy: str, repeat: int, scenario: str = "ai2"
) -> tuple[int, float, float]:
    """(jobs, median wall seconds, median CPU seconds) of ``repeat`` runs."""
    w = get_scenario(scenario)(config, cluster=cluster, days=days, seed=0)
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        simulate(config, w, cluster=cluster, days=days, policy=policy)  # type: ignore[arg-type]
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return len(w.jobs), statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--base-days", type=float, default=2.0)
    ap.add_argument("--scales", default="1,4,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policy", default="budgets")
    ap.add_argument("--skip-headline", action="store_true")
    ap.add_argument("--scenario", default="ai2")
    args = ap.parse_args()
    config = compile_repo(args.repo, dt.date(2026, 11, 29))
    cluster = config.largest_cluster()
    if not args.skip_headline:
        n, t, c = run(config, cluster, args.days, args.policy, args.repeat, args.scenario)
        gpus = config.clusters[cluster].gpus
        print(f"headline: {args.days:g} days, {n:,} jobs, {gpus} GPUs: median {t:.2f} s wall, {c:.2f} s CPU")
    if not args.scales:
        return
    print(f"{'scale':>6} {'days':>6} {'jobs':>8} {'seconds':>8} {'us/job':>8}")
    for f in (int(x) for x in args.scales.split(",")):
        days = args.base_days * f
        n, t, _ = run(config, cluster, days, args.policy, args.repeat, args.scenario)
        print(f"{f:>5}x {days:>6g} {n:>8,} {t:>8.2f} {t / n * 1e6:>8.0f}")


if __name__ == "__main__":
    main()
