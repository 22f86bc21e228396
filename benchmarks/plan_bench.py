"""Benchmark `allot plan` on the bundled example: a budget-only PR, both sides simulated on the
same workloads for each of the default seeds (1-5, a 7-day warm-up then 7 measured days each,
``--days``; the warm-up simulated once under the base and the head switched in after it since
stop 35; a pool of 2 processes; before issue 26: 5 days from an empty window).

Builds a throw-away git repository from the bundled example (budgets/, inventory/, policies/),
commits a PR that moves 10 share points between two top-level programs, then times:

  cold:  empty cache, both sides simulated
  warm:  same command again (both sides cached)
  head:  a second PR commit with another budget change: only the head side is re-simulated
  warm CLI: the warm case again as a fresh ``allot plan`` process (interpreter start, imports)

Usage:  .venv/bin/python benchmarks/plan_bench.py [--runs 3] [--days 7] [--seeds 1-5] [--cold-only]
Prints each run as it ends, then the median wall and CPU time of each case (each cold run uses a
fresh cache).

The machine this runs on is shared, so wall time measures the neighbours as much as the plan.
Each simulating case therefore also prints its **critical path**: the plan process's own CPU
plus the CPU of its busiest worker process (each worker's CPU is summed over the work items it
ran, recorded by wrapping the pool's work function).  On two free cores a CPU-bound plan takes
about that long; a badly balanced pool or serial work shows up in it, contention does not.

The frozen copy of the code is byte-compiled before timing, as ``pip install`` does: a cold
*cache* is measured, not Python compiling 300 modules on first import.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
compileall.compile_dir(_SNAPSHOT, quiet=1)
sys.path.insert(0, str(_SNAPSHOT))
_WORK_LOG = Path(tempfile.mkdtemp(prefix="plan-bench-workers-"))

from benchmarks.plan_case import argv as plan_argv  # noqa: E402
from benchmarks.plan_case import build  # noqa: E402

from allotment.cli.main import main  # noqa: E402


def _mode() -> str:
    import allotment._compiled as compiled

    return str(getattr(compiled, "_MODE", "unknown"))


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@dataclass(frozen=True, slots=True)
class Timing:
    wall: float
    cpu: float  # this process and every worker process
    critical: float  # this process's CPU + the busiest worker's (two free cores: ~ the wall time)


def _instrument() -> None:
    """Wrap the pool's work function so each worker logs the CPU seconds of every item it runs:
    ``impact_units.run_unit`` now, ``impact.run_task`` in versions before units (so the same
    script measures both).  Workers are forked, so they inherit the wrapper.  An item's CPU
    includes the processes it forked and reaped (since stop 49 a unit's head side runs in a
    forked child, ``plan.forked``), though they ran next to it: the busiest worker then
    over-states its share of the path, and the workers' CPU over the cores is the bound."""
    import importlib

    for mod_name, fn_name in (
        ("allotment.plan.impact_units", "run_unit"),
        ("allotment.plan.impact", "run_task"),
    ):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        fn = getattr(mod, fn_name, None)
        if fn is None:
            continue

        def logged(item: object, _fn: Any = fn) -> object:
            c = _own_and_reaped_cpu()
            out = _fn(item)
            with open(_WORK_LOG / f"{os.getpid()}.log", "a", encoding="utf-8") as f:
                f.write(json.dumps({"cpu": _own_and_reaped_cpu() - c}) + "\n")
            return out

        logged.__module__, logged.__qualname__ = mod_name, fn_name
        setattr(mod, fn_name, logged)
        return


def _own_and_reaped_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _busiest_worker_cpu(cores: int = 2) -> float:
    """What the workers add to the critical path since the last call (the plan process's own
    items excluded): the CPU of the busiest worker, or the workers' CPU shared over ``cores``
    when that is more (since stop 41 the pool runs more processes than cores, sharing them:
    plan/executors/local.py; neither schedule ends sooner than either bound on free cores)."""
    per: dict[str, float] = {}
    for f in _WORK_LOG.glob("*.log"):
        if f.stem != str(os.getpid()):
            per[f.stem] = sum(json.loads(line)["cpu"] for line in f.read_text().splitlines())
        f.unlink()
    return max(max(per.values(), default=0.0), sum(per.values()) / cores)


def timed(argv: list[str]) -> Timing:
    """Wall, total CPU and critical path of one in-process ``allot plan``.

    On a shared machine the wall time depends on what else runs; CPU seconds do much less.
    """
    _busiest_worker_cpu()
    t, c, own = time.perf_counter(), _cpu(), time.process_time()
    code = main(argv)
    if code not in (0, 1):
        raise SystemExit(f"allot plan exited {code}")
    own = time.process_time() - own
    return Timing(time.perf_counter() - t, _cpu() - c, own + _busiest_worker_cpu())


def timed_cli(argv: list[str]) -> Timing:
    """The same plan as a fresh process, as CI and a manager's shell run it."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(_SNAPSHOT), os.environ.get("PYTHONPATH", "")]),
    }
    t, c = time.perf_counter(), _cpu()
    done = subprocess.run([sys.executable, "-m", "allotment.cli.main", *argv], env=env, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"allot plan exited {done.returncode}")
    cpu = _cpu() - c
    return Timing(time.perf_counter() - t, cpu, cpu)


def one_run_with_teams(n: int, days: float) -> None:
    """Time one simulated side (one seed) of the bundled example with ``n`` extra teams under
    ``science``: what bounds the trees a plan simulates (MAX_SIMULATED_TEAMS)."""
    import datetime as dt

    from allotment.config.files import read_repo_files
    from allotment.plan.impact_units import Setup, Task, Unit, run_unit
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
            (sci / f"x{i:04d}" / "budget.yaml").write_text(
                f"owners: [o{i}@ai2.example]\nmembers: [u{i}]\n"
            )
        cfg = compile_files(read_repo_files(root), dt.date(2026, 11, 29), None)
        setup = Setup(cfg, cfg, (), cfg.largest_cluster(), days, "ai2", None)
        t, c = time.perf_counter(), time.process_time()
        run_unit(Unit(setup, 1, (Task("base", 1, "0" * 64),)))
        print(
            f"{len(cfg.leaves())} teams, one {days:g}-day run: {time.perf_counter() - t:.1f} s wall, "
            f"{time.process_time() - c:.1f} s CPU; load average {os.getloadavg()[0]:.1f}"
        )


def main_bench() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one-run-teams", type=int, help="instead: time one run with N extra teams")
    ap.add_argument("--days", type=float, default=7)
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--cold-only", action="store_true", help="time only the cold case")
    ap.add_argument("--save", type=Path, help="keep each cold run's comment and its JSON plan "
                    "(read warm from the cold run's cache) here, to cmp two versions")
    args = ap.parse_args()
    if args.one_run_teams is not None:
        one_run_with_teams(args.one_run_teams, args.days)
        return
    _instrument()
    cases: dict[str, list[Timing]] = {name: [] for name in CASES}
    size = 0
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            repo = build(Path(d))
            argv = [
                *plan_argv(repo, str(args.days), args.seeds),
                "--out",
                str(Path(d) / "plan.md"),
                "--cache-dir",
                str(Path(d) / "cache"),
            ]
            cases["cold"].append(timed(argv))
            size = len((Path(d) / "plan.md").read_text())  # the cold plan's comment, whatever follows
            if args.save is not None:
                n = len(cases["cold"])
                args.save.mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(d) / "plan.md", args.save / f"plan-{n}.md")
                out_json = ["--out", str(args.save / f"plan-{n}.json"), "--format", "json"]
                main([a for a in argv if a != "--out" and a != str(Path(d) / "plan.md")] + out_json)
            if args.cold_only:
                print(f"  run: cold {cases['cold'][-1]}; load average {os.getloadavg()[0]:.1f}", flush=True)
                continue
            cases["warm"].append(timed(argv))
            cases["warm CLI"].append(timed_cli(argv))
            repo.set_share("budgets/ai2/budget.yaml", "safety", 20)
            repo.commit("and a bit more safety", author="arjun.santos@ai2.example")
            cases["head"].append(timed(argv))
            print(
                "  run: "
                + ", ".join(
                    f"{name} {xs[-1].wall:.2f} s wall / {xs[-1].cpu:.2f} s CPU / {xs[-1].critical:.2f} s critical"
                    for name, xs in cases.items()
                )
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
    for name, xs in cases.items():
        if not xs:
            continue
        print(
            f"  {CASES[name]}: median {statistics.median(x.wall for x in xs):.2f} s wall, "
            f"{statistics.median(x.cpu for x in xs):.2f} s CPU, "
            f"{statistics.median(x.critical for x in xs):.2f} s critical path"
        )
    print(f"  comment size: {size} characters")
    shutil.rmtree(_SNAPSHOT, ignore_errors=True)
    shutil.rmtree(_WORK_LOG, ignore_errors=True)


CASES = {
    "cold": "cold cache (both sides simulated)",
    "warm": "warm cache (nothing simulated)   ",
    "warm CLI": "warm, fresh `allot plan` process ",
    "head": "new head commit (head simulated) ",
}


if __name__ == "__main__":
    main_bench()
