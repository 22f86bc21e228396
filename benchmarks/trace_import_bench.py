"""Trace import and read speed and memory (median of several runs, each in a fresh process).

    .venv/bin/python benchmarks/trace_import_bench.py [--runs 3] [--big-jobs 460000]

Cases: the real NASA SWF and Alibaba openb traces, a synthetic ~50 MB SWF (memory must follow
the sort chunk, not the file), and reading back a 30-day ai2 canonical trace.  Each case runs in
a child interpreter so its peak RSS (``ru_maxrss``) is its own; the table reports the median
wall time, jobs per second and peak RSS minus a fresh interpreter's baseline with the same
imports.  Prints a Markdown table (paste it into docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path("/work/shared/traces")
REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from allotment.traces.canonical import read_trace
from allotment.traces.fill_rules import rules_for
from allotment.traces.importers import AlibabaImporter, SwfImporter
from allotment.traces.pipeline import import_trace
case, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
t = time.perf_counter()
if case == "baseline":
    jobs = 0
elif case == "read":
    jobs = len(read_trace(src).jobs)
else:
    imp = SwfImporter() if case == "swf" else AlibabaImporter()
    jobs = import_trace(imp, src, out, fill=rules_for(imp.name)).imported
wall = time.perf_counter() - t
print(json.dumps({"jobs": jobs, "wall": wall, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def write_swf(path: Path, jobs: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    t = 0
    with path.open("w") as fh:
        fh.write("; Version: 2.2\n; MaxProcs: 1024\n")
        for i in range(1, jobs + 1):
            t += rng.randrange(0, 30)
            procs = rng.choice((1, 2, 4, 8, 16, 32, 64))
            user = rng.randrange(500)
            fh.write(
                f"{i:8d} {t:10d} {-1:6d} {rng.randrange(1, 90000):8d} {procs:5d} {-1:6d} {-1:6d} "
                f"{procs:5d} {-1:6d} {-1:6d} {1:2d} {user:5d} {user % 20:4d} "
                f"{rng.randrange(900):5d} {rng.randrange(3):3d} {-1:3d} {-1:3d} {-1:3d}\n"
            )


def run(case: str, src: Path, out: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, case, str(src), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big-jobs", type=int, default=460_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        big = d / "synthetic.swf"
        write_swf(big, args.big_jobs)
        ai2 = d / "ai2.jsonl"
        subprocess.run(
            [str(REPO / ".venv/bin/allot"), "trace", "generate", "--scenario", "ai2", "--days", "30",
             "--repo", str(REPO), "-o", str(ai2)],
            check=True, capture_output=True,
        )  # fmt: skip
        cases = [
            (
                "swf",
                "NASA iPSC SWF (gz, 1.7 MB)",
                SHARED / "pwa-nasa-ipsc-1993-swf/NASA-iPSC-1993-3.1-cln.swf.gz",
            ),
            (
                "alibaba",
                "Alibaba openb pods (0.6 MB)",
                SHARED / "alibaba-gpu-v2023-openb/openb_pod_list_default.csv",
            ),
            ("swf", f"synthetic SWF ({big.stat().st_size / 1e6:.0f} MB)", big),
            ("read", f"read ai2 30-day trace ({ai2.stat().st_size / 1e6:.0f} MB)", ai2),
        ]
        base = statistics.median(run("baseline", big, d / "x")["rss"] for _ in range(args.runs))
        print(f"runs per case: {args.runs}; baseline interpreter RSS {base / 1e6:.0f} MB\n")
        print("| case | jobs | median wall s | jobs/s | peak RSS over baseline |")
        print("|---|---:|---:|---:|---:|")
        for case, label, src in cases:
            results = [run(case, src, d / "out.jsonl") for _ in range(args.runs)]
            wall = statistics.median(r["wall"] for r in results)
            rss = statistics.median(r["rss"] for r in results) - base
            jobs = int(results[0]["jobs"])
            print(f"| {label} | {jobs:,} | {wall:.2f} | {jobs / wall:,.0f} | {rss / 1e6:.0f} MB |")


if __name__ == "__main__":
    main()
