"""One simulation for an instruction count: run it under callgrind, which counts the same on a
busy or a quiet machine (this VM's wall and CPU times drift by up to 1.6x within minutes).

Usage: PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=OUT \\
           python benchmarks/sim_instructions.py [--repo .] [--days 2] [--scenario ai2] [--seed 1]
then ``callgrind_annotate --inclusive=yes OUT | grep CPyDef_runner___simulate`` for the
instructions inside ``simulate()`` (compiled build; scenario generation and imports excluded).
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.sim.runner import simulate
from allotment.traces.scenarios import get_scenario


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--days", type=float, default=2.0)
    ap.add_argument("--scenario", default="ai2")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policy", default="budgets")
    args = ap.parse_args()
    config = compile_repo(args.repo, dt.date(2026, 11, 29))
    cluster = config.largest_cluster()
    w = get_scenario(args.scenario)(config, cluster=cluster, days=args.days, seed=args.seed)
    r = simulate(config, w, cluster=cluster, days=args.days, policy=args.policy)
    print(f"occupancy {r.metrics.get('occupancy')}")


if __name__ == "__main__":
    main()
