"""The gate's simulation as run, on a saved replay (issue 30, docs/fidelity.md the seventh pass):
the replay of the ``arbitrary`` workload's seed 3 on the real Slurm is judged again without a
cluster, as ``allot replay --from-events ... --reads`` does."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.reconcile.replay.compare import compare
from allotment.reconcile.replay.events import read_events
from allotment.reconcile.replay.read_times import as_ran, read_reads
from allotment.reconcile.replay.simlog import simulated_events
from allotment.sim.latency import PROFILES
from allotment.sim.workloads import from_trace

ROOT = Path(__file__).resolve().parents[2]
SAVED = Path(__file__).parent / "replays" / "arbitrary-3"


def test_seed_3_as_run_misses_nothing_and_starts_every_job_with_its_twin(tmp_path: Path) -> None:
    """f031 was started on the cluster by the tick reading at 120.9, after f028's launch at
    119.96 moved its run; the simulation ran no pass there (a launch changed nothing it
    counted) and started f031 5.7 s late, missing wait p50 batch (22.1 s against 16.4 s)."""
    subprocess.run([sys.executable, str(ROOT / "scripts/fidelity_workload.py"), str(tmp_path),
                    "--seed", "3", "--workload", "arbitrary"], check=True, capture_output=True)
    real = read_events(SAVED / "real.jsonl")
    trace = from_trace(tmp_path / "trace.jsonl")
    gate = as_ran(PROFILES["slurm-test"], read_reads(SAVED / "reads.json"), real, tuple(trace.node_events))
    config = compile_repo(tmp_path / "repo", dt.date(2026, 12, 1))
    sim = simulated_events(config, "gpulab", trace, gate, epoch_phase_s=70.0)
    rows = compare(real, sim, capacity=32, node_gpus={f"n{i}": 8 for i in range(1, 5)})
    assert [r.metric for r in rows if r.ok is False] == []
    first = {}
    for e in sorted(sim, key=lambda e: e.t):
        if e.event == "start" and e.job:
            first.setdefault(e.job, e.t)
    assert abs(first["f031"] - 121.974) < 0.01
