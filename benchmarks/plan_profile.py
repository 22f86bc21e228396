"""Where a cold ``allot plan``'s wall time goes: the parent's steps and every worker's phases.

Runs the plan_bench case (the bundled example, a 10-point share move, default seeds, an empty
cache) once in this process, with:

* cProfile on the parent process (``--pstats FILE`` keeps it; the top entries are printed);
* a timeline: each phase of each unit in each worker (workload generation, ``for_side``, the
  warm-up, the fork or the copy of the paused run, the switch, each measured part, the
  metrics), as wall instants from the plan's start and CPU seconds, logged by wrapping the
  module functions the workers call (workers, and the head sides they fork, inherit the
  wrappers);
* what a unit costs to send: its pickled size and the time to pickle and unpickle it.

Usage: PYTHONPATH=<compiled copy>/src python benchmarks/plan_profile.py [--seeds 1-5] [--days 7]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import json
import os
import pickle
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.plan_case import argv as plan_argv  # noqa: E402
from benchmarks.plan_case import build  # noqa: E402

_LOG = Path(tempfile.mkdtemp(prefix="plan-profile-"))
_T0 = [0.0]


def _log(event: str, **fields: Any) -> None:
    with open(_LOG / f"{os.getpid()}.log", "a", encoding="utf-8") as f:
        f.write(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "event": event, **fields}) + "\n")


def _wrap(mod: Any, name: str, label: str | None = None) -> None:
    fn = getattr(mod, name)

    @functools.wraps(fn)
    def timed(*a: Any, **k: Any) -> Any:
        w, c = time.time(), time.process_time()
        out = fn(*a, **k)
        _log(label or name, start=w - _T0[0], wall=time.time() - w, cpu=time.process_time() - c)
        return out

    setattr(mod, name, timed)


def instrument() -> None:
    import allotment.sim.switch as switch
    import allotment.sim.window as window
    from allotment.plan import forked, impact_units

    _wrap(impact_units, "workload", "generate")
    _wrap(forked, "start", "fork")
    _wrap(impact_units, "for_side")
    _wrap(impact_units, "run_unit", "unit")
    _wrap(switch, "start")
    _wrap(switch, "pause", "warm-up")
    _wrap(switch, "switched")
    _wrap(switch, "switch")
    _wrap(switch, "finish", "measured")
    _wrap(window, "measured", "metrics")


def payload(argv: list[str]) -> None:
    """Pickle size and round trip of the units the plan would send (built, not run)."""
    from allotment.plan import impact, impact_units

    seen: list[Any] = []

    def capture(self: Any, setup: Any, tasks: Any) -> list[Any]:
        us = impact_units.units(setup, tasks, 2, impact_units.by_seed)
        seen.extend(us)
        return []

    orig = impact.ImpactRunner._run
    impact.ImpactRunner._run = capture  # type: ignore[method-assign]
    try:
        from allotment.cli.main import main

        # the plan cannot summarize no runs: the units, built before, are what is wanted
        with contextlib.suppress(Exception):
            main([*argv, "--format", "json", "--out", os.devnull])
    finally:
        impact.ImpactRunner._run = orig  # type: ignore[method-assign]
    for u in seen[:1]:
        t = time.perf_counter()
        blob = pickle.dumps(u, protocol=pickle.HIGHEST_PROTOCOL)
        t1 = time.perf_counter()
        pickle.loads(blob)
        t2 = time.perf_counter()
        print(
            f"one unit pickled: {len(blob) / 1e3:.1f} kB, dumps {1e3 * (t1 - t):.1f} ms, "
            f"loads {1e3 * (t2 - t1):.1f} ms ({len(seen)} units)"
        )


def main_profile() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--days", default="7")
    ap.add_argument("--workers", default="2")
    ap.add_argument("--pstats", type=Path)
    args = ap.parse_args()
    t_import = time.perf_counter()
    from allotment.cli.main import main

    import_s = time.perf_counter() - t_import
    with tempfile.TemporaryDirectory() as d:
        repo = build(Path(d))
        argv = [*plan_argv(repo, args.days, args.seeds), "--workers", args.workers]
        instrument()
        prof = cProfile.Profile()
        _T0[0] = time.time()
        w, c = time.perf_counter(), time.process_time()
        prof.enable()
        main([*argv, "--out", str(Path(d) / "plan.md"), "--cache-dir", str(Path(d) / "cache")])
        prof.disable()
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        payload([*argv, "--cache-dir", str(Path(d) / "cache0")])  # after: it warms the parent
    print(
        f"import of the CLI: {import_s:.2f} s; plan: {wall:.2f} s wall, parent {cpu:.2f} s CPU, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    s = io.StringIO()
    st = pstats.Stats(prof, stream=s)
    st.sort_stats("cumulative").print_stats(45)
    print(s.getvalue())
    if args.pstats:
        st.dump_stats(str(args.pstats))
    events = [
        json.loads(line) for f in sorted(_LOG.glob("*.log")) for line in f.read_text().splitlines()
    ]
    events.sort(key=lambda e: e["start"])
    pids = {p: i for i, p in enumerate(sorted({e["pid"] for e in events}))}
    print("timeline (s from the plan's start; worker, phase, start, wall, CPU):")
    for e in events:
        print(
            f"  w{pids[e['pid']]} {e['event']:<10} {e['start']:7.2f} {e['wall']:7.2f} {e['cpu']:7.2f}"
        )
    for p, i in pids.items():
        mine = [e for e in events if e["pid"] == p and e["event"] == "unit"]
        if not mine:  # a unit's head side, forked from its worker (plan.forked)
            phases = [e for e in events if e["pid"] == p]
            parent = next((f"w{pids[e['ppid']]}" for e in phases if e["ppid"] in pids), "?")
            print(
                f"  w{i}: forked from {parent}, phases from {min(e['start'] for e in phases):.2f} s "
                f"to {max(e['start'] + e['wall'] for e in phases):.2f} s, "
                f"{sum(e['cpu'] for e in phases):.2f} s CPU in phases"
            )
            continue
        first = min(e["start"] for e in mine)
        last = max(e["start"] + e["wall"] for e in mine)
        print(
            f"  w{i}: {len(mine)} units, first starts {first:.2f} s, last ends {last:.2f} s, "
            f"{sum(e['cpu'] for e in mine):.2f} s CPU in units (a forked head's CPU not counted)"
        )


if __name__ == "__main__":
    main_profile()
