"""The cost of a run's first H days when its workload was drawn for D days (docs/benchmarks.md,
"Stop 57"): does a job of the run's head cost more when the run is longer?

Usage: PYTHONPATH=<build>/src python benchmarks/run_head.py [--scenario ai2] [--cluster h100]
           [--seed 1] --head H --drawn D [--repo .]

Draws ``--scenario`` for D days, builds the run (``sim.runner._Sim``, as ``simulate()`` does, in
bulk) and runs it to H days, then prints the jobs submitted by H and the CPU seconds of the run
alone (``time.process_time``: drawing and building left out).  With ``--callgrind``, under
``valgrind --tool=callgrind --instr-atstart=no``, it switches the instrumentation on around the
run only (``callgrind_control -i on``), so the count is the run's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import time
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.config.bulk import bulk_allocation
from allotment.core.context import build_context
from allotment.sim.overrides import apply_overrides
from allotment.sim.runner import _Sim
from allotment.sim.workloads import from_scenario
from allotment.traces.job_stream import TakenJobs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--scenario", default="ai2")
    ap.add_argument("--cluster", default="h100")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--head", type=float, required=True, help="days run")
    ap.add_argument("--drawn", type=float, required=True, help="days drawn")
    ap.add_argument("--callgrind", action="store_true", help="switch callgrind on around the run")
    args = ap.parse_args()
    config = compile_repo(args.repo, dt.date(2026, 11, 29))
    w = from_scenario(config, args.scenario, cluster=args.cluster, days=args.drawn, seed=args.seed)
    jobs = sum(1 for j in w.jobs if j.submit < args.head * 86400)
    source = TakenJobs.of(w)
    del w
    pol = apply_overrides(config.policy_for(args.cluster), {}, args.cluster, config.clusters[args.cluster].node_names)
    ctx = build_context(config, args.cluster, mode="budgets", policy=pol)
    with bulk_allocation():
        sim = _Sim(config, args.cluster, source, args.head, ctx, seed=args.seed)
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
        cpu = time.process_time()
        sim.run()
        cpu = time.process_time() - cpu
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
    print(f"{args.scenario} seed {args.seed}: first {args.head:g} of {args.drawn:g} days drawn, {jobs} jobs, "
          f"run CPU {cpu:.2f} s, {cpu / max(1, jobs) * 1e6:.1f} us a job")


if __name__ == "__main__":
    main()
