"""Run every benchmark with the arguments its section of docs/benchmarks.md quotes.

Figures are wall-clock medians of several runs on the machine at hand; paste what this prints into
docs/benchmarks.md with the date, the machine (``nproc``, ``uname -m``, Python version) and the load
average.  The Slurm benchmark needs a running test cluster (``bash tests/slurm/up.sh DIR``) and is
skipped otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS: tuple[tuple[str, ...], ...] = (
    ("compile_bench.py", "--runs", "9"),
    ("sched_pass_bench.py", "--repeat", "5"),
    ("within_team_bench.py", "--repeat", "7"),
    ("within_team_bench.py", "--tick", "--repeat", "7"),  # what a reconciler tick pays (issue 28, item 5)
    ("reconcile_bench.py", "sim", "--repeat", "9"),
    ("sim_bench.py", "--repeat", "3"),
    ("trace_import_bench.py", "--runs", "3"),
    ("plan_bench.py", "--runs", "3"),
)


def main() -> int:
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
    failed = 0
    for script, *args in RUNS:
        print(f"\n=== {script} {' '.join(args)}", flush=True)
        failed |= subprocess.call([sys.executable, str(HERE / script), *args]) != 0
    if os.environ.get("SLURM_CONF"):
        print("\n=== reconcile_bench.py slurm --repeat 7", flush=True)
        failed |= (
            subprocess.call(
                [sys.executable, str(HERE / "reconcile_bench.py"), "slurm", "--repeat", "7"]
            )
            != 0
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
