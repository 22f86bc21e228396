"""Reconciler tick benchmarks (issue 5 speed targets).

1. ``sim``: one tick of the core plus the policy diff with 5,000 pending and 1,000 running jobs on
   the bundled example's h100 cluster (128 nodes x 8 GPUs): ``plan_cluster`` + ``diff_policy``,
   and a full ``Reconciler.tick`` against the simulated backend holding those jobs.
2. ``slurm`` (only when SLURM_CONF points at a running test cluster, e.g. under
   ``bash tests/slurm/up.sh``): 500 real jobs, then full ticks including every Slurm command.

Prints the median of ``--repeat`` runs (and min/max) in milliseconds.

    .venv/bin/python benchmarks/reconcile_bench.py sim --repeat 7
    SLURM_CONF=/tmp/slurm.X/etc/slurm.conf .venv/bin/python benchmarks/reconcile_bench.py slurm
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import git

from allotment.backends.diff import diff_policy
from allotment.backends.policy import desired_policy
from allotment.backends.protocol import JobObs, NodeObs, Observation
from allotment.backends.simulated import SimulatedBackend, _Job
from allotment.compile.compiler import compile_repo
from allotment.reconcile.active import plan_cluster
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import DirSource, GitSource

ROOT = Path(__file__).resolve().parents[1]
NOW = 1_795_000_000.0


def _stats(name: str, samples: list[float], cpu: list[float] | None = None) -> None:
    ms = [s * 1000 for s in samples]
    line = f"{name}: median {statistics.median(ms):.1f} ms wall"
    line += f" (min {min(ms):.1f}, max {max(ms):.1f}, n={len(ms)})"
    if cpu:
        line += f", median {1000 * statistics.median(cpu):.1f} ms CPU"
    print(line)


def sim(repeat: int) -> None:
    config = compile_repo(ROOT, dt.date(2026, 11, 29))
    cluster = "h100"
    leaves = [n.name for n in config.leaves() if n.active and cluster in n.clusters]
    nodes = config.clusters[cluster].node_names
    rng = random.Random(5)
    jobs: list[JobObs] = []
    free = dict.fromkeys(nodes, 8)
    for i in range(1000):
        gpus = 1  # 1,000 running jobs on 1,024 GPUs
        node = next(n for n in nodes if free[n] >= gpus)
        free[node] -= gpus
        mr = rng.choice([0, 900, 3600, 4 * 3600])
        jobs.append(
            JobObs(
                str(i + 1),
                "u",
                rng.choice(leaves),
                "q",
                gpus,
                "running",
                NOW - 9000,
                NOW - rng.uniform(0, 8000),
                mr,
                True,
                0,
                (node,),
            )
        )
    for i in range(1000, 6000):
        jobs.append(
            JobObs(
                str(i + 1),
                "u",
                rng.choice(leaves),
                "q",
                rng.choice([1, 2, 4, 8, 16]),
                "pending",
                NOW - rng.uniform(0, 86400),
                None,
                rng.choice([0, 900, 3600]),
                True,
                1,
            )
        )
    obs = Observation(NOW, tuple(NodeObs(n, 8, 8 - free[n]) for n in nodes), tuple(jobs))
    usage = {leaf: rng.uniform(0, 5000) for leaf in leaves}
    desired = desired_policy(config, cluster)
    samples, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        plan_cluster(obs, config, cluster, usage, {})
        diff_policy(desired, desired, prune=False)
        samples.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    _stats("core + diff, 5000 pending + 1000 running (sim)", samples, cpu)

    # a full tick against the simulated backend holding the same jobs
    backend = SimulatedBackend(((n, 8) for n in nodes), now=NOW, requeue_delay_s=11)
    with tempfile.TemporaryDirectory() as tmp:
        rec = Reconciler(
            backend, DirSource(ROOT), Path(tmp), Options(cluster=cluster), clock=lambda: NOW
        )
        rec.tick()  # policy sync
        for j in jobs:
            backend.state.jobs[j.id] = _Job(
                j.id,
                "u",
                j.account,
                "alloc-1h" if j.min_runtime_s else "unallocated",
                j.gpus,
                j.submit,
                True,
                1,
                j.start,
                j.nodes[0] if j.nodes else None,
            )
        samples, cpu = [], []
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            rec.tick()
            samples.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        rec.close()
    _stats("full Reconciler.tick (sim backend, folder source, ledger, audit, status)", samples, cpu)


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=60).stdout


def slurm(repeat: int, jobs: int) -> None:
    if not os.environ.get("SLURM_CONF"):
        sys.exit("slurm: set SLURM_CONF to a running test cluster (bash tests/slurm/up.sh DIR)")
    sys.path.insert(0, str(ROOT))
    from tests.reconcile.repo import make_repo

    from allotment.backends.slurm.backend import SlurmBackend

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "budgets"
        make_repo(repo)
        rec = Reconciler(
            SlurmBackend(),
            GitSource(str(repo), "main", Path(tmp) / "state"),
            Path(tmp) / "state",
            Options(tiers_s=(20, 600)),
        )
        t = time.perf_counter()
        rec.tick()
        print(
            f"first tick (policy sync onto an empty cluster): {1000 * (time.perf_counter() - t):.0f} ms"
        )
        rng = random.Random(1)
        for _ in range(jobs):
            acct = rng.choice(["teama1", "teama2", "teamb"])
            qos = rng.choice(["unallocated", "alloc-20s", "alloc-10m"])
            _sh(
                "sbatch",
                "-A",
                acct,
                "-q",
                qos,
                "--gres=gpu:1",
                "-t",
                "30",
                "-o",
                "/dev/null",
                "--wrap",
                "sleep 600",
            )
        time.sleep(3)
        t = time.perf_counter()
        r = rec.tick()
        print(
            f"first tick with {jobs} jobs (sets every priority): {1000 * (time.perf_counter() - t):.0f} ms, {r.counts()}"
        )
        samples = []
        for _ in range(repeat):
            t = time.perf_counter()
            rec.tick()
            samples.append(time.perf_counter() - t)
        _stats(f"full tick, {jobs} jobs on the local Slurm (steady state)", samples)
        rec.close()
        _sh("scancel", "--user=root")
        with git.Repo(repo):
            pass


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("what", choices=("sim", "slurm"))
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--jobs", type=int, default=500)
    a = p.parse_args()
    if a.what == "sim":
        sim(a.repeat)
    else:
        slurm(a.repeat, a.jobs)


if __name__ == "__main__":
    main()
