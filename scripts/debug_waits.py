"""What held the debug jobs that waited: a breakdown from the event log.

Usage: python scripts/debug_waits.py EVENTS.jsonl [--over 60] [--probe 25]

Debug jobs are the policy's (``core.debug.is_debug`` with the header's threshold and node size);
a job's wait is its first start minus its eligible time (docs/metrics.md).  Printed: the share of
debug jobs waiting over ``--over`` seconds, split by size (whole-node jobs) and by teams with a
``max_gpus`` ceiling, and, for each such wait, what the cluster offered ``--probe`` seconds after
the job became eligible (after at least one pass; passes run every 10 s), rebuilt from the log:

- ``at_cap``: its team ran its ceiling's worth of allocated GPUs (only its own work can yield);
- ``free_on_reserved`` / ``unalloc_only_on_reserved``: free GPUs, or free GPUs plus unallocated
  work, would have held it only on nodes the current reservation holds;
- ``unalloc_elsewhere``: free GPUs plus unallocated work would have held it off the reservation;
- ``unprotected_only``: only allocated work past its protection would have made room (whether
  the reclaim or slicing rules allowed it is not replayed);
- ``all_protected``: nothing short of protected work would have.

A reading aid for docs/design/reservation.md, not a metric.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from allotment.core.debug import is_debug


@dataclass(slots=True)
class _Run:
    account: str
    nodes: tuple[str, ...]
    node_gpus: tuple[int, ...]
    allocated: bool
    protected_until: float


def load_events(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return lines[0], lines[1:]


def _classify(t: float, job: dict[str, Any], running: dict[str, _Run], hold: set[str], down: set[str],
              nodes: dict[str, int], ceilings: dict[str, float]) -> str:
    acct, g = job["account"], job["gpus"]
    if acct in ceilings:
        used = sum(sum(r.node_gpus) for r in running.values() if r.allocated and r.account == acct)
        if used + g > ceilings[acct]:
            return "at_cap"
    free = {n: (0 if n in down else k) for n, k in nodes.items()}
    unalloc: Counter[str] = Counter()
    unprot: Counter[str] = Counter()
    for r in running.values():
        for n, k in zip(r.nodes, r.node_gpus, strict=True):
            free[n] -= k
            if not r.allocated:
                unalloc[n] += k
            elif r.protected_until <= t:
                unprot[n] += k
    if any(free[n] >= g for n in hold):
        return "free_on_reserved"
    if any(free[n] + unalloc[n] >= g for n in nodes if n not in hold and n not in down):
        return "unalloc_elsewhere"
    if any(free[n] + unalloc[n] >= g for n in hold):
        return "unalloc_only_on_reserved"
    if any(free[n] + unalloc[n] + unprot[n] >= g for n in nodes if n not in down):
        return "unprotected_only"
    return "all_protected"


@dataclass(frozen=True, slots=True)
class DebugWaits:
    """The debug jobs of a run (by the policy's rule) and those that waited too long; shared
    with ``debug_waits_detail.py``."""

    submit: dict[str, dict[str, Any]]  # job -> its submit event
    eligible: dict[str, float]  # job -> when it could first start
    first: dict[str, float]  # job -> its first start
    debug: list[str]
    waited: set[str]  # debug jobs whose first start came over ``over`` s after eligibility


def debug_waits(hdr: dict[str, Any], events: list[dict[str, Any]], over: float) -> DebugWaits:
    submit: dict[str, dict[str, Any]] = {}
    eligible: dict[str, float] = {}
    first: dict[str, float] = {}
    for e in events:
        if e["event"] == "submit":
            submit[e["job"]] = e
            if not e.get("held"):
                eligible[e["job"]] = e["t"]
        elif e["event"] == "eligible":
            eligible[e["job"]] = e["t"]
        elif e["event"] == "start":
            first.setdefault(e["job"], e["t"])
    debug = [j for j, s in submit.items() if j in eligible
             and is_debug(s["min_runtime"], s["gpus"], hdr["debug_threshold_s"], hdr["debug_max_gpus"])]
    waited = {j for j in debug if first.get(j, hdr["end"]) - eligible[j] > over}
    return DebugWaits(submit, eligible, first, debug, waited)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("events")
    ap.add_argument("--over", type=float, default=60.0)
    ap.add_argument("--probe", type=float, default=25.0)
    a = ap.parse_args()
    hdr, events = load_events(a.events)
    nodes: dict[str, int] = hdr["nodes"]
    ceilings: dict[str, float] = hdr.get("ceilings", {})
    w = debug_waits(hdr, events, a.over)
    submit, eligible, first, debug, waited = w.submit, w.eligible, w.first, w.debug, w.waited
    whole = {j for j in debug if submit[j]["gpus"] >= hdr["debug_max_gpus"]}
    capped = {j for j in debug if submit[j]["account"] in ceilings}
    n = len(debug)
    print(f"debug jobs {n}; waiting over {a.over:.0f} s: {100 * len(waited) / n:.2f}%")
    print(f"  whole-node jobs: {100 * len(waited & whole) / n:.2f} points ({len(whole)} jobs)")
    print(f"  teams with a ceiling: {100 * len(waited & capped) / n:.2f} points ({len(capped)} jobs)")
    rest = set(debug) - whole - capped
    print(f"  the others: {100 * len(waited & rest) / max(1, len(rest)):.2f}% of their {len(rest)}")
    probes = sorted((eligible[j] + a.probe, j) for j in waited)
    running: dict[str, _Run] = {}
    hold: set[str] = set()
    holder: str | None = None
    down: set[str] = set()
    held: Counter[str] = Counter()
    k = 0
    for e in events:
        while k < len(probes) and probes[k][0] < e["t"]:
            t, j = probes[k]
            k += 1
            if first.get(j, hdr["end"]) > t:
                size = "whole-node" if j in whole else "smaller"
                held[f"{_classify(t, submit[j], running, hold, down, nodes, ceilings):26s} {size}"] += 1
        kind = e["event"]
        if kind == "start":
            mr = submit[e["job"]]["min_runtime"] if e["allocated"] else 0.0
            running[e["job"]] = _Run(e["account"], tuple(e["nodes"]), tuple(e["node_gpus"]), e["allocated"], e["t"] + mr)
            if e["job"] == holder:
                hold, holder = set(), None
        elif kind in ("end", "preempt"):
            running.pop(e["job"], None)
        elif kind == "drain":
            down.add(e["node"])
        elif kind == "resume":
            down.discard(e["node"])
        elif kind == "reserve":
            hold, holder = set(e["nodes"]), e["job"]
    total = sum(held.values())
    print(f"what held them, {a.probe:.0f} s after they became eligible ({total} still waiting):")
    for c, m in held.most_common():
        print(f"  {c}  {m:6d}  {100 * m / total:5.1f}%")


if __name__ == "__main__":
    main()
