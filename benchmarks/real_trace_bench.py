"""Imported traces, old core against new, paired: CPU seconds of ``allot simulate`` (pure Python,
or with ``--compiled`` each tree's own build: compiled copies, ``/work/tools/mkcopy.sh``).

    python benchmarks/real_trace_bench.py --old /tmp/old383 [--parent /tmp/base] --new . [--runs 3] [--work /tmp/rtb]
        [--cuts 14,27,54] [--sweep-users 1] [--policy budgets] [--cases philly,nasa,alibaba] [--compiled]

Why: the speed passes were measured on the bundled scenarios, whose accounts queue at most about
50 jobs; issue 27 found a real trace 4.4x slower than the core of a month ago because one account
held thousands.  This imports the real traces of ``/work/shared/traces`` (NASA iPSC SWF, Alibaba
openb with ``--gpus 64 --since 110d``) and the Philly-shaped workload of ``philly_shaped.py``
(cut to its first ``--cuts`` days, each cut's cost and the growth exponent between cuts), then
runs each case under both trees (and ``--parent``, the commit before a change, if given), in turn
``--runs`` times, each run in a fresh
process whose user+system CPU time (``resource.getrusage(RUSAGE_CHILDREN)``) is its figure.  The
new tree's metrics JSON is compared with the old one's only for the record (the rules changed
since 383c0b8, so they differ); identity is checked against the same tree's parent commit.
Prints a Markdown table (paste it into docs/benchmarks.md) and ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

SHARED = Path("/work/shared/traces")
HERE = Path(__file__).resolve().parent
PY = Path(sys.executable)
ALLOT = [str(PY), "-c", "import sys; from allotment.cli.main import main; sys.argv[0] = 'allot'; sys.exit(main())"]
CSV_MAP = "id=id,submit=submit,work=work,gpus=gpus,gpus_per_node=gpus_per_node,account=account,user=user"


PURE = {"ALLOTMENT_PURE": "1"}  # emptied by ``--compiled``: each tree's extensions run, if built


def allot(tree: Path, *args: str, quiet: bool = True) -> float:
    """Run ``allot ARGS`` from ``tree`` (pure Python unless ``--compiled``); its CPU seconds."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), **PURE)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*ALLOT, *args], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL if quiet else None)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cases(work: Path, new: Path, which: list[str], cuts: list[int], sweep_users: int) -> list[tuple[str, Path, Path, int]]:
    """(name, trace, config repository, jobs) of each case, imported once into ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, Path, Path, int]] = []

    def imported(name: str, *args: str) -> tuple[Path, Path]:
        trace, repo = work / f"{name}.jsonl", work / f"{name}-repo"
        if not trace.exists():
            if repo.exists():
                subprocess.run(["rm", "-rf", str(repo)], check=True)
            allot(new, "trace", "import", *args, "-o", str(trace), "--repo-out", str(repo), "-q")
        return trace, repo

    def jobs(trace: Path) -> int:
        with trace.open() as fh:
            return sum(1 for _ in fh) - 1

    if "philly" in which:
        src = work / f"philly-u{sweep_users}.csv"
        if not src.exists():
            subprocess.run([str(PY), str(HERE / "philly_shaped.py"), str(src), "--sweep-users", str(sweep_users)],
                           check=True)
        for d in cuts:
            t, r = imported(f"philly-u{sweep_users}-{d}d", "--format", "csv", str(src), "--map", CSV_MAP,
                            "--gpus", "512", "--until", f"{d}d")
            out.append((f"Philly-shaped, first {d} days", t, r, jobs(t)))
    if "nasa" in which:
        t, r = imported("nasa", "--format", "swf", str(SHARED / "pwa-nasa-ipsc-1993-swf/NASA-iPSC-1993-3.1-cln.swf.gz"))
        out.append(("NASA iPSC 1993 (SWF)", t, r, jobs(t)))
    if "alibaba" in which:
        t, r = imported("alibaba", "--format", "alibaba-gpu",
                        str(SHARED / "alibaba-gpu-v2023-openb/openb_pod_list_default.csv"), "--gpus", "64",
                        "--since", "110d")
        out.append(("Alibaba openb, --gpus 64 --since 110d", t, r, jobs(t)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, default=HERE.parent)
    ap.add_argument("--parent", type=Path, default=None, help="a third tree, e.g. the commit before a change")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/rtb"))
    ap.add_argument("--cuts", default="14,27,54")
    ap.add_argument("--sweep-users", type=int, default=1)
    ap.add_argument("--policy", default="budgets")
    ap.add_argument("--cases", default="philly,nasa,alibaba")
    ap.add_argument("--compiled", action="store_true", help="run each tree's compiled build (not forced pure)")
    a = ap.parse_args()
    if a.compiled:
        PURE.clear()
    old, new = a.old.resolve(), a.new.resolve()
    todo = cases(a.work, new, a.cases.split(","), [int(c) for c in a.cuts.split(",")], a.sweep_users)
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    par = a.parent.resolve() if a.parent else None
    if par:
        print("\n| case | jobs | old s | parent s | new s | new / old | new / parent |\n|---|---:|---:|---:|---:|---:|---:|")
    else:
        print("\n| case | jobs | old s | new s | new / old |\n|---|---:|---:|---:|---:|")
    rows: list[tuple[str, int, float, float]] = []
    for name, trace, repo, n in todo:
        o: list[float] = []
        m: list[float] = []
        w: list[float] = []
        for _ in range(a.runs):  # paired: old, (parent,) new, back to back
            common = ("simulate", "--repo", str(repo), "--trace", str(trace), "--policy", a.policy,
                      "--json", str(a.work / "out.json"))
            o.append(allot(old, *common))
            if par:
                m.append(allot(par, *common))
            w.append(allot(new, *common))
        mo, mw = statistics.median(o), statistics.median(w)
        rows.append((name, n, mo, mw))
        if par:
            mm = statistics.median(m)
            print(f"| {name} | {n:,} | {mo:.2f} | {mm:.2f} | {mw:.2f} | {mw / mo:.2f} | {mw / mm:.2f} |", flush=True)
        else:
            print(f"| {name} | {n:,} | {mo:.2f} | {mw:.2f} | {mw / mo:.2f} |", flush=True)
    philly = [(n, mo, mw) for name, n, mo, mw in rows if name.startswith("Philly")]
    if len(philly) >= 2:
        (n0, o0, w0), (n1, o1, w1) = philly[0], philly[-1]
        k = math.log(n1 / n0)
        print(f"\ngrowth exponent ({n0:,} -> {n1:,} jobs): old {math.log(o1 / o0) / k:.2f}, "
              f"new {math.log(w1 / w0) / k:.2f}")
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
