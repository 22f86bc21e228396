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

With ``--decompose``, also where the slowest tenth of the large jobs spent their waits (stop
43): each waiting moment filed by its team's tier then (tier 0 while the team ran fewer
allocated GPUs than its entitlement scaled to the healthy capacity, as ``core.tiers``, read from
the log's starts, ends and preemptions) and by whether the job held a reservation (and then
whether a held node still carried allocated work within its protection), the tier-0 hours not
holding split by the size of the gang that held the reservation meanwhile; and, given
``--target`` seconds, how many large jobs may wait longer for the p90 to meet it, how many do,
and how many of those spent more than the target in tier 1 alone (a wait fair share asks for)
or in tier 1 and holding together (what no hand-over rule shortens).

Waits are the summary's (``sim.summary.waits``): first start minus eligible time, a job never
started counted to the end of the run, rejected jobs left out, nearest-rank percentiles; the job
kind is the one the ``submit`` line carries.  So the large and debug p90 equal the ``--json``'s
``wait.large`` and ``wait.debug`` (checked on a run; a check, not a metric of its own).  A
reading aid for docs/results.md (issue 25, stop 42), like ``debug_waits.py``.
"""

from __future__ import annotations

import argparse
import json
import math
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


def decompose(path: str, frac: float = 0.1, target: float | None = None) -> dict[str, Any]:
    """Where the slowest ``frac`` of the large jobs' waits went (module docstring)."""
    with open(path, encoding="utf-8") as f:
        hdr = json.loads(f.readline())
        events = [json.loads(line) for line in f]
    end, cap = hdr["end"], hdr["capacity_gpus"]
    ent, large = hdr["entitlement_gpus"], large_from(cap)
    submit: dict[str, dict[str, Any]] = {}
    eligible: dict[str, float] = {}
    first: dict[str, float] = {}
    rejected: set[str] = set()
    for e in events:
        k = e["event"]
        if k == "submit":
            submit[e["job"]] = e
            if not e.get("held"):
                eligible[e["job"]] = e["t"]
        elif k == "eligible":
            eligible.setdefault(e["job"], e["t"])
        elif k == "reject":
            rejected.add(e["job"])
        elif k == "start":
            first.setdefault(e["job"], e["t"])
    waits = {j: first.get(j, end) - eligible[j] for j, s in submit.items()
             if s["gpus"] >= large and j in eligible and eligible[j] < end and j not in rejected}
    ranked = sorted(waits, key=lambda j: (-waits[j], j))
    over = [j for j in ranked if target is not None and waits[j] > target]
    top = set(ranked[:max(1, round(len(ranked) * frac))]) | set(over)
    alloc: dict[str, float] = defaultdict(float)
    running: dict[str, tuple[str, int, bool, list[str], float]] = {}  # account, gpus, allocated, nodes, protected until
    on_node: dict[str, set[str]] = defaultdict(set)
    healthy = float(cap)
    holds: dict[str, list[str]] = {}
    acc: dict[str, dict[str, float]] = {j: defaultdict(float) for j in top}
    behind: dict[int, float] = defaultdict(float)
    waiting: set[str] = set()
    started: set[str] = set()
    last = 0.0

    def file(dt: float, t: float) -> None:
        for j in waiting:
            team = submit[j]["account"]
            tier = 0 if alloc[team] < ent.get(team, 0.0) * healthy / cap else 1
            if j in holds:
                protected = any(running[r][2] and running[r][4] > t for n in holds[j] for r in on_node[n])
                acc[j][f"tier {tier}, holding, {'protected work on its nodes' if protected else 'no protected work left'}"] += dt
            else:
                acc[j][f"tier {tier}, not holding"] += dt
                if tier == 0 and j in ranked[:max(1, round(len(ranked) * frac))]:
                    for h in holds:
                        behind[submit[h]["gpus"]] += dt

    for e in events:
        t, k = e["t"], e["event"]
        if t > last:
            file(t - last, last)
            last = t
        j = e.get("job", "")
        if k == "start":
            running[j] = (e["account"], e["gpus"], e["allocated"], e["nodes"], t + min(submit[j]["min_runtime"], 8 * HOUR))
            for n in e["nodes"]:
                on_node[n].add(j)
            if e["allocated"]:
                alloc[e["account"]] += e["gpus"]
            waiting.discard(j)
            holds.pop(j, None)
            started.add(j)
        elif k in ("end", "preempt") and j in running:
            a, g, allocated, nodes, _ = running.pop(j)
            for n in nodes:
                on_node[n].discard(j)
            if allocated:
                alloc[a] -= g
        elif k == "reserve":
            holds[j] = e["nodes"]
        elif k == "release":
            holds.pop(j, None)
        elif k in ("drain", "resume"):
            healthy += (-1 if k == "drain" else 1) * hdr["nodes"][e["node"]]
        if k in ("submit", "eligible") and j in top and eligible.get(j) == t and j not in started:
            waiting.add(j)
    file(end - last, last)
    slow = ranked[:max(1, round(len(ranked) * frac))]
    hours: dict[str, float] = defaultdict(float)
    for j in slow:
        for c, v in acc[j].items():
            hours[c] += v / HOUR
    out: dict[str, Any] = {
        "slowest": len(slow), "wait_hours": sum(waits[j] for j in slow) / HOUR,
        "shortest_h": waits[slow[-1]] / HOUR, "by_gpus": dict(sorted(defaultdict(int, {g: sum(
            1 for j in slow if submit[j]["gpus"] == g) for g in {submit[j]["gpus"] for j in slow}}).items())),
        "hours": dict(sorted(hours.items())),
        "tier0_not_holding_behind_gpus": {g: v / HOUR for g, v in sorted(behind.items())},
    }
    if target is not None:
        def more(j: str, holding: bool) -> bool:
            return sum(v for c, v in acc[j].items() if c.startswith("tier 1") or (holding and "holding," in c)) > target
        out["target"] = {"target_s": target, "may_wait_longer": len(ranked) - math.ceil(0.9 * len(ranked)),
                         "wait_longer": len(over), "tier1_alone_over": sum(1 for j in over if more(j, False)),
                         "tier1_or_holding_over": sum(1 for j in over if more(j, True))}
    return out


def _decomposed(path: str, d: dict[str, Any]) -> str:
    lines = [f"{path}: slowest {d['slowest']} large jobs (>= {d['shortest_h']:.1f} h; by GPUs {d['by_gpus']}), "
             f"{d['wait_hours']:,.0f} h of waiting:"]
    lines += [f"  {c}: {v:,.0f} h" for c, v in d["hours"].items()]
    lines.append("  tier 0 not holding, by the GPUs of the gang holding meanwhile: " + ", ".join(
        f"{g}: {v:,.0f} h" for g, v in d["tier0_not_holding_behind_gpus"].items()))
    if "target" in d:
        t = d["target"]
        lines.append(f"  target {t['target_s']:,.0f} s: at most {t['may_wait_longer']} may wait longer, {t['wait_longer']} do; "
                     f"of them {t['tier1_alone_over']} spent longer than it in tier 1 alone, "
                     f"{t['tier1_or_holding_over']} in tier 1 or holding")
    return "\n".join(lines)


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
    ap.add_argument("--decompose", action="store_true", help="where the slowest tenth of the large jobs waited")
    ap.add_argument("--target", type=float, help="with --decompose: the large p90 target, in seconds")
    a = ap.parse_args()
    if a.decompose:
        dec = {p: decompose(p, target=a.target) for p in a.events}
        print(json.dumps(dec, indent=1, sort_keys=True) if a.json else "\n".join(_decomposed(p, d) for p, d in dec.items()))
        return
    results = {p: read(p) for p in a.events}
    if a.json:
        print(json.dumps(results, indent=1, sort_keys=True))
    else:
        print("\n".join(_line(p, r) for p, r in results.items()))


if __name__ == "__main__":
    main()
