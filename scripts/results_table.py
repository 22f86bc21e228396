"""Print docs/results.md's per-seed tables from a folder of ``allot simulate --json`` files.

Usage: python scripts/results_table.py DIR   (files named POLICY_SEED.json, see scripts/results.sh)
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
        cells = [("" if ok(b[s], s) else "**miss** ") + show(b[s], s) for s in seeds]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {'yes' if all(ok(b[s], s) for s in seeds) else 'no'} |")
    return "\n".join(lines)


def main(folder: str) -> None:
    data = load(Path(folder))
    print(targets(data))
    for policy in POLICIES:
        if policy in data:
            print()
            print(table(policy, data[policy]))


if __name__ == "__main__":
    main(sys.argv[1])
