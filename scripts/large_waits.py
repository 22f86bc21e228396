"""Where a run's large-job and debug waits sit, and what its reservations were held for: read from
the event log.

Usage: python scripts/large_waits.py EVENTS.jsonl [EVENTS.jsonl ...] [--json]

Per log, one line of:

- the large-job wait p50 / p90 (jobs of at least ``large_from(capacity)`` GPUs) and the p90 (and
  count) of each large size;
- the debug p90 of all debug jobs, of each team with a ``max_gpus`` ceiling (the header's
  ``ceilings``: on ``ai2-big-gangs``, red-team, whose debug jobs wait under their own ceiling),
  and of every other team together;
- the hours the reservations were held by holds that ended without their job starting (passed
  on to another job, or the job left the queue or stopped qualifying) and by holds that ended in
  their job's start (a hold runs from its job's first ``reserve`` to its ``release`` or
  ``start``; one still open at the end is counted apart).

Waits are the summary's (``sim.summary.waits``): first start minus eligible time, a job never
started counted to the end of the run, rejected jobs left out, nearest-rank percentiles; the job
kind is the one the ``submit`` line carries.  So the large and debug p90 equal the ``--json``'s
``wait.large`` and ``wait.debug`` (checked on a run; a check, not a metric of its own).  A
reading aid for docs/results.md (issue 25, stop 42), like ``debug_waits.py``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

from allotment.sim.summary import large_from, percentile

HOUR = 3600.0


def read(path: str) -> dict[str, Any]:
    """The figures of one event log (see the module docstring)."""
    with open(path, encoding="utf-8") as f:
        hdr = json.loads(f.readline())
        submit: dict[str, tuple[str, int, str]] = {}  # job -> (account, gpus, kind)
        eligible: dict[str, float] = {}
        first: dict[str, float] = {}
        rejected: set[str] = set()
        open_at: dict[str, float] = {}  # holder -> when its hold began
        held = {"released": 0.0, "passed_on": 0.0, "started": 0.0}
        for line in f:
            e = json.loads(line)
            k, t = e["event"], e["t"]
            if k == "submit":
                j = e["job"]
                submit[j] = (e["account"], e["gpus"], e["kind"])
                if not e.get("held"):
                    eligible[j] = t
            elif k == "eligible":
                eligible.setdefault(e["job"], t)
            elif k == "reject":
                rejected.add(e["job"])
            elif k == "start":
                j = e["job"]
                first.setdefault(j, t)
                if j in open_at:
                    held["started"] += t - open_at.pop(j)
            elif k == "reserve":
                open_at.setdefault(e["job"], t)
            elif k == "release":
                h = t - open_at.pop(e["job"])
                held["released"] += h
                if "holds the reservation" in e["reason"] or "hold the reservations" in e["reason"]:
                    held["passed_on"] += h
    end = hdr["end"]
    large = large_from(hdr["capacity_gpus"])
    ceilings = sorted(hdr.get("ceilings", {}))
    waits: dict[str, list[float]] = defaultdict(list)
    for j, (account, gpus, kind) in submit.items():
        if j not in eligible or eligible[j] >= end or j in rejected:
            continue
        w = first.get(j, end) - eligible[j]
        if gpus >= large:
            waits["large"].append(w)
            waits[f"large {gpus}"].append(w)
        if kind == "debug":
            waits["debug"].append(w)
            waits[f"debug {account}" if account in ceilings else "debug others"].append(w)
    out: dict[str, Any] = {
        "large_p50": percentile(waits["large"], 50), "large_p90": percentile(waits["large"], 90),
        "large_n": len(waits["large"]),
        "large_p90_by_gpus": {int(c.split()[1]): percentile(w, 90) for c, w in sorted(
            waits.items(), key=lambda x: (len(x[0]), x[0])) if c.startswith("large ")},
        "large_n_by_gpus": {int(c.split()[1]): len(w) for c, w in waits.items() if c.startswith("large ")},
        "debug_p90": percentile(waits["debug"], 90),
        "debug_p90_by": {c.split(" ", 1)[1]: percentile(w, 90) for c, w in sorted(waits.items())
                         if c.startswith("debug ")},
        "held_hours": {k: v / HOUR for k, v in held.items()},
        "held_hours_open_at_end": sum(end - t for t in open_at.values()) / HOUR,
    }
    return out


def _line(path: str, r: dict[str, Any]) -> str:
    sizes = " / ".join(f"{g}: {p / HOUR:.1f} h (n={r['large_n_by_gpus'][g]})" for g, p in r["large_p90_by_gpus"].items())
    debug = ", ".join(f"{who} {p:,.1f}" for who, p in r["debug_p90_by"].items())
    h = r["held_hours"]
    return (f"{path}\n  large p50/p90 {r['large_p50']:,.0f} / {r['large_p90']:,.0f} s (n={r['large_n']}); p90 by GPUs {sizes}\n"
            f"  debug p90 {r['debug_p90']:,.1f} s ({debug})\n"
            f"  hours held: released before a start {h['released']:,.0f} (passed on {h['passed_on']:,.0f}), "
            f"ending in a start {h['started']:,.0f}, open at the end {r['held_hours_open_at_end']:,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("events", nargs="+")
    ap.add_argument("--json", action="store_true", help="one JSON object per log, by path")
    a = ap.parse_args()
    results = {p: read(p) for p in a.events}
    if a.json:
        print(json.dumps(results, indent=1, sort_keys=True))
    else:
        print("\n".join(_line(p, r) for p, r in results.items()))


if __name__ == "__main__":
    main()
