"""Benchmark `allot plan` on the bundled example: a budget-only PR, both sides simulated on the
same workloads for each of the default seeds (1-5, 5 days each, a pool of 2 processes).

Builds a throw-away git repository from the bundled example (budgets/, inventory/, policies/),
commits a PR that moves 10 share points between two top-level programs, then times:

  cold:  empty cache, both sides simulated
  warm:  same command again (both sides cached)
  head:  a second PR commit with another budget change: only the head side is re-simulated

Usage:  .venv/bin/python benchmarks/plan_bench.py [--runs 3] [--days 5] [--seeds 1-5]
Prints each run as it ends, then the median wall and CPU time of each case (each cold run uses a
fresh cache).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Benchmark one frozen copy of the code: in a shared working tree the scheduler may change
# mid-run, which would (rightly) invalidate the simulation cache and skew the warm figures.
_SNAPSHOT = Path(tempfile.mkdtemp(prefix="plan-bench-src-"))
shutil.copytree(
    ROOT / "src" / "allotment",
    _SNAPSHOT / "allotment",
    ignore=shutil.ignore_patterns("__pycache__"),
)
sys.path.insert(0, str(_SNAPSHOT))

from tests.plan.gitrepo import GitRepo  # noqa: E402

from allotment.cli.main import main  # noqa: E402


def build(tmp: Path) -> GitRepo:
    repo = GitRepo(tmp / "repo")
    for top in ("budgets", "inventory", "policies"):
        shutil.copytree(ROOT / top, repo.path / top)
    repo.commit("bundled example", author="mia.cohen@ai2.example")
    repo.switch("pr", create=True)
    repo.set_share("budgets/ai2/budget.yaml", "olmo", 50)
    repo.set_share("budgets/ai2/budget.yaml", "science", 10)
    repo.commit("Move 10 points from science to olmo", author="arjun.santos@ai2.example")
    return repo


def _mode() -> str:
    import allotment._compiled as compiled

    return str(getattr(compiled, "_MODE", "unknown"))


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and its simulation workers).

    On a shared machine the wall time depends on what else runs; CPU seconds do much less.
    With two idle cores and both sides simulated in parallel, wall ~ CPU / 2.
    """
    t, c = time.perf_counter(), _cpu()
    code = main(argv)
    if code not in (0, 1):
        raise SystemExit(f"allot plan exited {code}")
    return time.perf_counter() - t, _cpu() - c


def one_run_with_teams(n: int, days: float) -> None:
    """Time one simulated side (one seed) of the bundled example with ``n`` extra teams under
    ``science``: what bounds the trees a plan simulates (MAX_SIMULATED_TEAMS)."""
    import datetime as dt

    from allotment.config.files import read_repo_files
    from allotment.plan.impact import Task, run_task
    from allotment.plan.revision import compile_files

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for top in ("budgets", "inventory", "policies"):
            shutil.copytree(ROOT / top, root / top)
        sci = root / "budgets/ai2/science"
        kids = "".join(f"  x{i:04d}:\n    share: 1\n" for i in range(n))
        text = (sci / "budget.yaml").read_text()
        (sci / "budget.yaml").write_text(text.replace("children:\n", "children:\n" + kids, 1))
        for i in range(n):
            (sci / f"x{i:04d}").mkdir()
            (sci / f"x{i:04d}" / "budget.yaml").write_text(f"owners: [o{i}@ai2.example]\nmembers: [u{i}]\n")
        cfg = compile_files(read_repo_files(root), dt.date(2026, 11, 29), None)
        task = Task("base", 1, "0" * 64, cfg, cfg, cfg, (), cfg.largest_cluster(), days, "ai2", None)
        t, c = time.perf_counter(), time.process_time()
        run_task(task)
        print(
            f"{len(cfg.leaves())} teams, one {days:g}-day run: {time.perf_counter() - t:.1f} s wall, "
            f"{time.process_time() - c:.1f} s CPU; load average {os.getloadavg()[0]:.1f}"
        )


def main_bench() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one-run-teams", type=int, help="instead: time one run with N extra teams")
    ap.add_argument("--days", type=float, default=5)
    ap.add_argument("--seeds", default="1-5")
    args = ap.parse_args()
    if args.one_run_teams is not None:
        one_run_with_teams(args.one_run_teams, args.days)
        return
    cold: list[tuple[float, float]] = []
    warm: list[tuple[float, float]] = []
    head: list[tuple[float, float]] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            repo = build(Path(d))
            argv = [
                "plan",
                "--repo",
                str(repo.path),
                "--base",
                "main",
                "--head",
                "pr",
                "--days",
                str(args.days),
                "--seeds",
                args.seeds,
                "--at",
                "2026-11-29",
                "--out",
                str(Path(d) / "plan.md"),
                "--cache-dir",
                str(Path(d) / "cache"),
            ]
            cold.append(timed(argv))
            warm.append(timed(argv))
            repo.set_share("budgets/ai2/budget.yaml", "safety", 20)
            repo.commit("and a bit more safety", author="arjun.santos@ai2.example")
            head.append(timed(argv))
            size = len((Path(d) / "plan.md").read_text())
            cases = (("cold", cold[-1]), ("warm", warm[-1]), ("head", head[-1]))
            print(
                "  run: "
                + ", ".join(f"{name} {w:.2f} s wall / {c:.2f} s CPU" for name, (w, c) in cases)
                + f"; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"allot plan, bundled example, seeds {args.seeds} x {args.days:g} days, "
        f"{args.runs} runs (repo {rev}, {_mode()})"
    )
    for label, xs in (
        ("cold cache (both sides simulated)", cold),
        ("warm cache (nothing simulated)   ", warm),
        ("new head commit (head simulated) ", head),
    ):
        print(
            f"  {label}: median {statistics.median(w for w, _ in xs):.2f} s wall, "
            f"{statistics.median(c for _, c in xs):.2f} s CPU"
        )
    print(f"  comment size: {size} characters")
    shutil.rmtree(_SNAPSHOT, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
