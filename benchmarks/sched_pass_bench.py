"""One scheduling pass with 10,000 pending and 1,000 running jobs on 128 nodes of 8 GPUs.

Usage: .venv/bin/python benchmarks/sched_pass_bench.py [--repeat 7]

Measures (median of --repeat runs, wall time):
  decide      core.decide.decide(): build the scheduler from the snapshot + one pass with the
              full pending order and reasons (what a reconciler calls);
  pass        Scheduler.run_pass() on an already built scheduler (what the simulator pays);
  build       build_scheduler() alone.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.core.builders import make_config

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.decide import build_scheduler, decide
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot

TEAMS = {f"team{i:02d}": 1 + (i % 4) for i in range(15)}


def snapshot(seed: int = 0) -> Snapshot:
    rng = random.Random(seed)
    nodes = tuple(NodeState(f"n{i:03d}", 8) for i in range(128))
    teams = sorted(TEAMS)
    running = []
    free = {n.name: 8 for n in nodes}
    names = sorted(free)
    k = 0
    # 1,000 running jobs: mostly 1 GPU, some 2, on 1,024 GPUs; a quarter past their minimum
    for i in range(1000):
        gpus = 1 if i < 980 else 2
        while free[names[k]] < gpus:
            k += 1
        node = names[k]
        free[node] -= gpus
        mr = 0.0 if i % 10 == 0 else 3600.0
        spec = JobSpec(f"r{i:05d}", 0.0, rng.choice(teams), gpus, 7200.0, user=f"u{i % 150}", min_runtime=mr)
        start = float(rng.randint(0, 7200))
        running.append(RunningJob(spec, start, ((node, gpus),), mr > 0, start + mr))
    pending = []
    for i in range(10000):
        gpus = rng.choice((1, 1, 2, 4, 8, 16, 64))
        spec = JobSpec(
            f"p{i:05d}",
            float(rng.randint(0, 7200)),
            rng.choice(teams),
            gpus,
            float(rng.randint(600, 36000)),
            user=f"u{i % 150}",
            gpus_per_node=8 if gpus > 8 else None,
            min_runtime=float(rng.choice((0, 900, 3600))),
            priority=rng.choice((0, 0, 1, 2)),
        )
        pending.append(PendingJob(spec, spec.submit, spec.submit))
    usage = {t: float(rng.randint(0, 5000)) for t in teams}
    return Snapshot(nodes, tuple(running), tuple(pending), usage)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    config = make_config(TEAMS, nodes=128, gpus_per_node=8, policy=Policy())
    ctx = build_context(config, "c1")
    snap = snapshot()
    now = 7300.0
    res: dict[str, list[float]] = {"decide": [], "pass": [], "build": []}
    for _ in range(args.repeat):
        t = time.perf_counter()
        d = decide(snap, ctx, now)
        res["decide"].append(time.perf_counter() - t)
        t = time.perf_counter()
        s = build_scheduler(snap, ctx, now)
        res["build"].append(time.perf_counter() - t)
        t = time.perf_counter()
        s.run_pass(now, snap.usage)
        res["pass"].append(time.perf_counter() - t)
    print(f"pending {len(snap.pending)}, running {len(snap.running)}, nodes {len(snap.nodes)}; "
          f"decisions: {len(d.starts)} starts, {len(d.preemptions)} preemptions, {len(d.order)} ranked")
    for k, v in res.items():
        print(f"{k:7s} median {statistics.median(v) * 1000:8.1f} ms  (min {min(v) * 1000:.1f}, n={len(v)})")


if __name__ == "__main__":
    main()
