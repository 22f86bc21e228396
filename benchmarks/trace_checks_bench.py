"""CPU cost of the trace checks: read a canonical trace, import the real SWF and Alibaba traces.

    PYTHONPATH=src python benchmarks/trace_checks_bench.py TRACE.jsonl [--runs 3] [--repo DIR]

Run it once with this tree's ``src`` and once with the previous version's on ``PYTHONPATH`` to
compare them side by side.  CPU time (``time.process_time``), not wall time, because the shared
machine is loaded by other runs; each case is the median of ``--runs`` in-process repetitions.
``--repo`` adds a read with the config checks (``job_fit``), as ``allot simulate --trace`` does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SHARED = Path("/work/shared/traces")
SWF = SHARED / "pwa-nasa-ipsc-1993-swf" / "NASA-iPSC-1993-3.1-cln.swf.gz"
ALIBABA = SHARED / "alibaba-gpu-v2023-openb" / "openb_pod_list_default.csv"


def _median_cpu(fn: Callable[[], int], runs: int) -> tuple[int, float]:
    times, n = [], 0
    for _ in range(runs):
        t = time.process_time()
        n = fn()
        times.append(time.process_time() - t)
    return n, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repo", type=Path)
    args = ap.parse_args()

    from allotment.traces.canonical import read_trace
    from allotment.traces.fill_rules import rules_for
    from allotment.traces.importers import AlibabaImporter, SwfImporter
    from allotment.traces.pipeline import import_trace

    cases: list[tuple[str, Callable[[], int]]] = [
        ("read canonical trace", lambda: len(read_trace(args.trace).jobs))
    ]
    if args.repo is not None:
        from allotment.compile.compiler import compile_repo
        from allotment.traces.job_fit import job_fit

        fit = job_fit(compile_repo(args.repo, dt.date(2026, 11, 29)))
        cases.append(("read + config checks", lambda: len(read_trace(args.trace, fit=fit).jobs)))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "o.jsonl"
        for name, src, imp in (("import NASA SWF", SWF, SwfImporter()), ("import Alibaba", ALIBABA, AlibabaImporter())):  # fmt: skip
            if src.exists():
                cases.append((name, lambda s=src, i=imp: import_trace(i, s, out, fill=rules_for(i.name)).imported))  # type: ignore[misc]  # fmt: skip
        print("| case | jobs | median CPU s |\n|---|---:|---:|")
        for name, fn in cases:
            n, cpu = _median_cpu(fn, args.runs)
            print(f"| {name} | {n:,} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
