"""What held the debug jobs that waited, finer than ``debug_waits.py``: it also reads the workload.

Usage: python scripts/debug_waits_detail.py EVENTS.jsonl --seed S --days D [--repo .] [--at 2026-11-30]

The event log does not carry declared priorities or work, so the scenario's workload is generated
again (``--seed``, ``--days``, ``--repo`` and ``--at`` as the run had them; the ai2 scenario on the
header's cluster).  Each debug job (``core.debug.is_debug``) waiting over 60 s is classified 25 s
after it became eligible from the state rebuilt from the log:

- ``cap: ...``: its team ran its ceiling's worth of allocated GPUs; ``lower-prio takeable``:
  its lower-priority work past protection would make room (``within-team``); ``debug-slice
  takeable``: with same-priority work that would end after it (``core.preemption.debug_slice``);
  ``same-prio ends earlier``: only same-priority work that would end *before* it; ``protected``:
  only protected work (its kinds listed);
- otherwise the first of: free GPUs / unallocated work off the reservation, its own team's
  lower-priority work, room only on reserved nodes, its own team's same-priority work, other
  teams' work past protection (with the team's tier: 0 below what it is owed, 1 at or above),
  all protected.

Expected ends use the simulator's exact work (a requeued job's progress is rebuilt from its
checkpoints).  A reading aid for docs/design/preemption.md, not a metric.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debug_waits import debug_waits, load_events  # scripts/, beside this one

from allotment.compile.compiler import compile_repo
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.sim.workloads import from_scenario


@dataclass(slots=True)
class _Run:
    account: str
    gpus: int
    nodes: tuple[str, ...]
    node_gpus: tuple[int, ...]
    allocated: bool
    protected_until: float
    priority: int
    kind: str
    start: float
    end: float


@dataclass(slots=True)
class _State:
    running: dict[str, _Run]
    down: set[str]
    hold: set[str]


def _cap_class(t: float, s: JobSpec, end: float, mine: list[_Run], over: int) -> str:
    past = [r for r in mine if r.protected_until <= t]
    if sum(r.gpus for r in past if r.priority < s.priority) >= over:
        return "cap: lower-prio takeable"
    later = [r for r in past if r.priority < s.priority or (r.priority == s.priority and r.end > end)]
    if sum(r.gpus for r in later) >= over:
        return "cap: debug-slice takeable"
    if sum(r.gpus for r in past) >= over:
        return "cap: same-prio ends earlier"
    kinds = sorted({r.kind for r in mine if r.protected_until > t})
    return f"cap: protected ({','.join(kinds)})"


def _classify(t: float, s: JobSpec, done: float, st: _State, nodes: dict[str, int], owed: float,
              ceiling: float | None) -> str:
    g = s.gpus
    mine = [r for r in st.running.values() if r.allocated and r.account == s.account]
    alloc = sum(r.gpus for r in mine)
    size = "whole-node" if g >= max(nodes.values()) else "smaller"
    if ceiling is not None and alloc + g > ceiling:
        return f"{_cap_class(t, s, t + s.work - done, mine, int(alloc + g - ceiling))} {size}"
    free = {n: (0 if n in st.down else k) for n, k in nodes.items()}
    un: Counter[str] = Counter()
    low: Counter[str] = Counter()
    same: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for r in st.running.values():
        for n, k in zip(r.nodes, r.node_gpus, strict=True):
            free[n] -= k
            if not r.allocated:
                un[n] += k
            elif r.protected_until <= t:
                if r.account != s.account:
                    other[n] += k
                elif r.priority < s.priority:
                    low[n] += k
                else:
                    same[n] += k
    up = [n for n in nodes if n not in st.down]
    off = [n for n in up if n not in st.hold]
    steps = (
        ("free or unallocated off the reservation", off, (un,)),
        ("own lower-prio work off the reservation", off, (un, low)),
        ("room only on reserved nodes", up, (un, low)),
        ("own same-prio work", up, (un, low, same)),
        ("others' work past protection", up, (un, low, same, other)),
    )
    for name, where, parts in steps:
        if any(free[n] + sum(p[n] for p in parts) >= g for n in where):
            return f"{name} tier{0 if alloc < owed else 1} {size}"
    return f"all protected {size}"


def _apply(e: dict[str, Any], st: _State, spec: dict[str, JobSpec], submit: dict[str, dict[str, Any]],
           done: Counter[str], holder: list[str | None]) -> None:
    kind = e["event"]
    if kind == "start":
        j = e["job"]
        s = spec[j]
        mr = submit[j]["min_runtime"] if e["allocated"] else 0.0
        left = s.work - done[j]
        st.running[j] = _Run(e["account"], e["gpus"], tuple(e["nodes"]), tuple(e["node_gpus"]), e["allocated"],
                             e["t"] + min(mr, left), s.priority, s.kind, e["t"], e["t"] + left)
        if j == holder[0]:
            st.hold, holder[0] = set(), None
    elif kind in ("end", "preempt"):
        r = st.running.pop(e["job"], None)
        s = spec[e["job"]]
        if kind == "preempt" and r is not None and s.resumable:
            ran, ci = e["t"] - r.start, s.checkpoint_interval
            done[e["job"]] += ran if not ci else math.floor(ran / ci) * ci
    elif kind == "drain":
        st.down.add(e["node"])
    elif kind == "resume":
        st.down.discard(e["node"])
    elif kind == "reserve":
        st.hold, holder[0] = set(e["nodes"]), e["job"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("events")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--days", type=float, required=True)
    ap.add_argument("--repo", default=".")
    ap.add_argument("--at", default="2026-11-30")
    a = ap.parse_args()
    hdr, events = load_events(a.events)
    config = compile_repo(Path(a.repo), dt.date.fromisoformat(a.at))
    cluster = hdr["cluster"]
    spec = {j.id: j for j in from_scenario(config, "ai2", cluster=cluster, days=a.days, seed=a.seed).jobs}
    ent = build_context(config, cluster, mode="budgets").entitlement_gpus
    nodes: dict[str, int] = hdr["nodes"]
    ceilings: dict[str, float] = hdr.get("ceilings", {})
    w = debug_waits(hdr, events, 60.0)
    submit, eligible, first, debug, waited = w.submit, w.eligible, w.first, w.debug, w.waited
    probes = sorted((eligible[j] + 25.0, j) for j in waited)
    st = _State({}, set(), set())
    done: Counter[str] = Counter()
    holder: list[str | None] = [None]
    held: Counter[str] = Counter()
    k = 0
    for e in events:
        while k < len(probes) and probes[k][0] < e["t"]:
            t, j = probes[k]
            k += 1
            if first.get(j, hdr["end"]) > t:
                s = spec[j]
                healthy = sum(g for n, g in nodes.items() if n not in st.down)
                owed = ent.get(s.account, 0.0) * healthy / hdr["capacity_gpus"]
                held[_classify(t, s, done[j], st, nodes, owed, ceilings.get(s.account))] += 1
        _apply(e, st, spec, submit, done, holder)
    total = sum(held.values())
    print(f"debug jobs {len(debug)}; waiting over 60 s: {100 * len(waited) / len(debug):.2f}% ({total} probed)")
    for c, m in held.most_common():
        print(f"  {c:55s} {m:6d}  {100 * m / total:5.1f}%")


if __name__ == "__main__":
    main()
