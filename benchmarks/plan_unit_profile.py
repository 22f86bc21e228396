"""Profile one unit of `allot plan`'s simulation work on the bundled example: seed 1's workload,
the base's warm-up simulated once, then the base side and the head (switched in after the
warm-up, ``sim/switch.py``) each over the measured days; base and head are the same config, so
the profile is of the simulator alone (docs/benchmarks.md, "Stop 35").

Usage:  PYTHONPATH=src python benchmarks/plan_unit_profile.py [--days 2] [--top 45]
``--days`` is both the warm-up and the measured part (the plan's default is 7 each; a shorter
one keeps a pure-Python profile to minutes).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import pstats
import tempfile
import time
from pathlib import Path

from allotment.config.files import read_repo_files
from allotment.plan.impact_units import Setup, Task, Unit, run_unit
from allotment.plan.revision import compile_files

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=float, default=2.0)
    ap.add_argument("--top", type=int, default=45)
    args = ap.parse_args()
    cfg = compile_files(read_repo_files(ROOT), dt.date(2026, 11, 29), None)
    setup = Setup(cfg, cfg, (), cfg.largest_cluster(), args.days, "ai2-contended", None,
                  warmup_days=args.days, switch=True)
    unit = Unit(setup, 1, (Task("base", 1, "base"), Task("head", 1, "head")))
    out = Path(tempfile.mkdtemp(prefix="plan-profile-")) / "unit.prof"
    cpu = time.process_time()
    cProfile.runctx("run_unit(unit)", {"run_unit": run_unit}, {"unit": unit}, str(out))
    print(f"CPU {time.process_time() - cpu:.1f} s (profiled); profile in {out}")
    stats = pstats.Stats(str(out))
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top // 2)


if __name__ == "__main__":
    main()
