"""Print docs/results.md's per-seed tables from a folder of ``allot simulate --json`` files.

Usage: python scripts/results_table.py DIR   (files named POLICY_SEED.json, see scripts/results.sh)

With ``attribution-SEED.json`` files in DIR (``scripts/owed_gap.py --json``, written by
``ATTRIBUTE=1 scripts/results.sh``) it ends with where each budgets run's hour-capped shortfall
came from.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

POLICIES = ("budgets", "priority", "fifo")
# (heading, getter, format, worst = min or max)
COLUMNS: tuple[tuple[str, Any, str, Any], ...] = (
    ("occupancy", lambda m: m["occupancy"], "{:.3f}", min),
    ("delivered/owed (hour-capped)", lambda m: m["delivered_over_owed"], "{:.3f}", min),
    ("received (uncapped)", lambda m: m["received"], "{:.3f}", min),
    ("team totals capped (old measure)", lambda m: _totals_capped(m), "{:.3f}", min),
    ("teams >= 0.95", lambda m: m["teams_at_or_above_95"], "{:.0f}", min),
    ("teams >= 0.95 uncapped", lambda m: sum(t["received"] >= 0.95 for t in m["teams"].values()), "{:.0f}", min),
    ("teams < 0.90", lambda m: m["teams_below_90"], "{:.0f}", max),
    ("lowest team", lambda m: m["teams_min_ratio"], "{:.3f}", min),
    ("debug p50 s", lambda m: m["wait"]["debug"]["p50"], "{:.0f}", max),
    ("debug p90 s", lambda m: m["wait"]["debug"]["p90"], "{:.0f}", max),
    ("large p90 h", lambda m: m["wait"]["large"]["p90"] / 3600, "{:.1f}", max),
    ("all pending p90 s", lambda m: m["pending"]["all"]["p90"], "{:.0f}", max),
    ("preemptions", lambda m: m["preemptions"], "{:,.0f}", max),
    ("debug-slice", lambda m: m["preemptions_by_rule"].get("debug-slice", 0), "{:,.0f}", max),
    ("lost GPU-h", lambda m: m["lost_gpu_hours"], "{:,.0f}", max),
)


def _totals_capped(m: dict[str, Any]) -> float:
    """The definition before the hour cap: each team's total ran capped at its total owed."""
    teams = m["teams"].values()
    owed = sum(t["owed"] for t in teams)
    return sum(min(t["received_gpu_hours"], t["owed"]) for t in teams) / owed if owed else 1.0


def load(folder: Path) -> dict[str, dict[int, dict[str, Any]]]:
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for f in sorted(folder.glob("*_*.json")):
        policy, seed = f.stem.rsplit("_", 1)
        out.setdefault(policy, {})[int(seed)] = json.loads(f.read_text())
    return out


def table(policy: str, runs: dict[int, dict[str, Any]]) -> str:
    head = "| seed | " + " | ".join(c[0] for c in COLUMNS) + " |"
    lines = [f"### {policy}", "", head, "|" + "---|" * (len(COLUMNS) + 1)]
    for seed, m in sorted(runs.items()):
        lines.append(f"| {seed} | " + " | ".join(fmt.format(get(m)) for _, get, fmt, _ in COLUMNS) + " |")
    vals = [[get(m) for m in runs.values()] for _, get, _, _ in COLUMNS]
    lines.append("| mean | " + " | ".join(c[2].format(statistics.fmean(v)) for c, v in zip(COLUMNS, vals, strict=True)) + " |")
    lines.append("| worst | " + " | ".join(c[2].format(c[3](v)) for c, v in zip(COLUMNS, vals, strict=True)) + " |")
    return "\n".join(lines)


def targets(data: dict[str, dict[int, dict[str, Any]]]) -> str:
    b, p = data["budgets"], data.get("priority", {})
    checks = (
        ("occupancy >= 0.97", lambda m, s: m["occupancy"] >= 0.97, lambda m, s: f"{m['occupancy']:.3f}"),
        ("delivered/owed (hour-capped) >= 0.97", lambda m, s: m["delivered_over_owed"] >= 0.97,
         lambda m, s: f"{m['delivered_over_owed']:.3f}"),
        (">= 13 of 15 teams >= 0.95", lambda m, s: m["teams_at_or_above_95"] >= 13, lambda m, s: str(m["teams_at_or_above_95"])),
        ("no team < 0.90", lambda m, s: m["teams_below_90"] == 0, lambda m, s: f"{m['teams_below_90']} (lowest {m['teams_min_ratio']:.3f})"),
        ("debug p90 <= 60 s", lambda m, s: m["wait"]["debug"]["p90"] <= 60, lambda m, s: f"{m['wait']['debug']['p90']:.0f} s"),
        ("priority debug p90 >= 10x budgets", lambda m, s: s in p and p[s]["wait"]["debug"]["p90"] >= 10 * m["wait"]["debug"]["p90"],
         lambda m, s: f"{p[s]['wait']['debug']['p90'] / max(m['wait']['debug']['p90'], 1e-9):.0f}x" if s in p else "-"),
    )
    seeds = sorted(b)
    lines = ["| target (budgets) | " + " | ".join(f"seed {s}" for s in seeds) + " | holds on every seed |",
             "|---|" + "---:|" * len(seeds) + "---|"]
    for name, ok, show in checks:
        if name.startswith("priority") and not p:
            lines.append(f"| {name} | " + " | ".join("-" for _ in seeds) + " | not run |")
            continue
        cells = [("" if ok(b[s], s) else "**miss** ") + show(b[s], s) for s in seeds]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {'yes' if all(ok(b[s], s) for s in seeds) else 'no'} |")
    return "\n".join(lines)


#: owed_gap.py's categories (a partition of the shortfall), and what each means in one phrase
CATEGORIES = (
    ("a_big", "only jobs bigger than the team's room below its allocation could use it"),
    ("f_free", "free GPUs unused"),
    ("c_unalloc", "unallocated work not evicted"),
    ("c_reclaim", "reclaimable work not reclaimed"),
    ("d_order", "the 7-day order forbids the reclaim"),
    ("b_protected", "protected borrowing"),
    ("f_other", "held by teams within their allocation"),
    ("e_hour", "hour-total artefact"),
)
#: a_big split: what the smallest such job would have needed, and the part bigger than the allocation
SIZES = (8, 16, 32, 64, 128, 256)
BIG = ("a_huge", "a_big:f_free", "a_big:c_unalloc", "a_big:c_reclaim", "a_big:d_order", "a_big:b_protected", "a_big:f_other")


def attribution(folder: Path) -> str:
    """Per seed: the shortfall (owed - hour-capped delivered) split by cause, in % of it."""
    runs = {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in sorted(folder.glob("attribution-*.json"))}
    if not runs:
        return ""

    def pct(x: float, of: float) -> str:
        return f"{100 * x / of:.0f}%" if of else "-"

    lines = ["### Where the hour-capped shortfall comes from (budgets; scripts/owed_gap.py)", "",
             "; ".join(f"`{c}`: {why}" for c, why in CATEGORIES) + ".", "",
             "| seed | delivered/owed | shortfall GPU-h | " + " | ".join(c for c, _ in CATEGORIES)
             + " | counting unallocated as delivered | demand of jobs fitting the allocation (sensitivity) |",
             "|" + "---:|" * (len(CATEGORIES) + 5)]
    for seed, r in sorted(runs.items()):
        short, sf = r["owed"] - r["delivered"], r["shortfall"]
        lines.append(f"| {seed} | {r['delivered_over_owed']:.3f} | {short:,.0f} | "
                     + " | ".join(pct(sf[c], short) for c, _ in CATEGORIES)
                     + f" | {r['counting_unallocated']:.3f} | {r['fitting_demand']:.3f} |")
    lines += ["", "`a_big` split, in % of `a_big`: `a_huge` = the job exceeds the team's whole allocation; "
              "`a_big:X` = the GPUs the smallest such job would have needed were of class X.", "",
              "| seed | " + " | ".join(BIG) + " |", "|" + "---:|" * (len(BIG) + 1)]
    for seed, r in sorted(runs.items()):
        sf = r["shortfall"]
        lines.append(f"| {seed} | " + " | ".join(pct(sf[c], sf["a_big"]) for c in BIG) + " |")
    lines += ["", "`a_big` by the GPUs of that smallest job (in % of `a_big`; 256 = 256 or more), and the part of "
              "`c_unalloc + c_reclaim` while such a job also waited (it is then often the queue's first blocked "
              "candidate, the only one allowed to preempt):", "",
              "| seed | " + " | ".join(f"<= {g}" for g in SIZES) + " | c_* behind a bigger job |",
              "|" + "---:|" * (len(SIZES) + 2)]
    for seed, r in sorted(runs.items()):
        sf = r["shortfall"]
        c = sf["c_unalloc"] + sf["c_reclaim"]
        lines.append(f"| {seed} | " + " | ".join(pct(sf.get(f"a_big_job:{g}", 0.0), sf["a_big"]) for g in SIZES)
                     + f" | {pct(sf.get('c_behind_big', 0.0), c)} |")
    return "\n".join(lines)


def main(folder: str) -> None:
    data = load(Path(folder))
    print(targets(data))
    for policy in POLICIES:
        if policy in data:
            print()
            print(table(policy, data[policy]))
    extra = attribution(Path(folder))
    if extra:
        print()
        print(extra)


if __name__ == "__main__":
    main(sys.argv[1])
