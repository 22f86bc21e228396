"""Print docs/results.md's headline: one table per workload and cluster, budgets / priority /
fifo side by side over seeds, and the issue-25 targets checked seed by seed.

Usage: python scripts/headline_tables.py DIR   (files SCENARIO-CLUSTER-POLICY-SEED.json, written
by scripts/headline.sh from ``allot simulate --json``)

Why a range and not a mean: a target must hold on every seed, so each cell shows the lowest and
highest value over the seeds (one value when they agree).  Both readings of the post's metric
are shown: ``ratio`` (delivered and owed both capped hour by hour at demand, the strict one) and
``received`` (owed capped at demand, delivered as delivered: the post's words).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

POLICIES = ("budgets", "priority", "fifo")
Metrics = dict[str, Any]


def _teams(m: Metrics, key: str, at_least: float) -> int:
    return sum(t[key] >= at_least for t in m["teams"].values())


def _below(m: Metrics, key: str, under: float) -> int:
    return sum(t[key] < under for t in m["teams"].values())


def _wait(kind: str, q: str, scale: float = 1.0) -> Callable[[Metrics], float]:
    return lambda m: m["wait"][kind][q] / scale


# (heading, value, format)
COLUMNS: tuple[tuple[str, Callable[[Metrics], float], str], ...] = (
    ("delivered/owed (`ratio`)", lambda m: m["delivered_over_owed"], "{:.3f}"),
    ("`received`", lambda m: m["received"], "{:.3f}"),
    ("teams >= 0.95 (`ratio`)", lambda m: _teams(m, "ratio", 0.95), "{:.0f}"),
    ("teams >= 0.95 (`received`)", lambda m: _teams(m, "received", 0.95), "{:.0f}"),
    ("teams < 0.90 (`ratio` / `received`)", lambda m: _below(m, "ratio", 0.90), "{:.0f}"),
    ("lowest team (`ratio`)", lambda m: min(t["ratio"] for t in m["teams"].values()), "{:.3f}"),
    ("occupancy", lambda m: m["occupancy"], "{:.3f}"),
    ("debug p50 / p90 s", _wait("debug", "p90"), "{:.0f}"),
    ("interactive p90 s", _wait("interactive", "p90"), "{:.0f}"),
    ("train p90 h", _wait("train", "p90", 3600), "{:.1f}"),
    ("batch p90 h", _wait("batch", "p90", 3600), "{:.1f}"),
    ("large p50 / p90 h", _wait("large", "p90", 3600), "{:.1f}"),
    ("lost GPU-h", lambda m: m["lost_gpu_hours"], "{:,.0f}"),
)
# columns that show a first figure before the column's own: (heading, value of the first figure)
PAIRED: dict[str, Callable[[Metrics], float]] = {
    "debug p50 / p90 s": _wait("debug", "p50"),
    "large p50 / p90 h": _wait("large", "p50", 3600),
}
# columns that show a second figure after the column's own
SECOND: dict[str, Callable[[Metrics], float]] = {
    "teams < 0.90 (`ratio` / `received`)": lambda m: _below(m, "received", 0.90),
}

# the targets of issue 25 (and the Ai2 table), per workload and cluster: (what, holds(budgets, others))
Target = tuple[str, Callable[[Metrics, dict[str, Metrics]], bool]]
TARGETS: dict[tuple[str, str], tuple[Target, ...]] = {
    ("ai2", "h100"): (
        ("occupancy >= 0.97", lambda b, o: b["occupancy"] >= 0.97),
        ("delivered/owed (`ratio`) >= 0.97", lambda b, o: b["delivered_over_owed"] >= 0.97),
        (">= 13 of 15 teams >= 0.95 (`ratio`)", lambda b, o: _teams(b, "ratio", 0.95) >= 13),
        ("no team < 0.90 (`ratio`)", lambda b, o: _below(b, "ratio", 0.90) == 0),
        ("debug p90 <= 60 s", lambda b, o: b["wait"]["debug"]["p90"] <= 60),
        ("priority's debug p90 >= 10x budgets'",
         lambda b, o: o["priority"]["wait"]["debug"]["p90"] >= 10 * b["wait"]["debug"]["p90"]),
    ),
    ("ai2", "b200"): (
        ("delivered/owed (`ratio`) >= 0.97", lambda b, o: b["delivered_over_owed"] >= 0.97),
        (">= 11 of 13 teams >= 0.95 (`ratio`)", lambda b, o: _teams(b, "ratio", 0.95) >= 11),
        ("no team < 0.90 (`ratio`)", lambda b, o: _below(b, "ratio", 0.90) == 0),
        ("debug p90 <= 60 s", lambda b, o: b["wait"]["debug"]["p90"] <= 60),
        ("occupancy >= 0.97", lambda b, o: b["occupancy"] >= 0.97),
    ),
    ("ai2-big-gangs", "h100"): (
        ("large p90 <= half the better of fifo and priority",
         lambda b, o: b["wait"]["large"]["p90"] <= 0.5 * min(o["fifo"]["wait"]["large"]["p90"],
                                                             o["priority"]["wait"]["large"]["p90"])),
        ("occupancy >= 0.97", lambda b, o: b["occupancy"] >= 0.97),
        (">= 13 of 15 teams >= 0.95 (`received`)", lambda b, o: _teams(b, "received", 0.95) >= 13),
        ("no team < 0.90 (`received`)", lambda b, o: _below(b, "received", 0.90) == 0),
        ("debug p90 <= 60 s", lambda b, o: b["wait"]["debug"]["p90"] <= 60),
    ),
}


def _span(values: list[float], fmt: str) -> str:
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo} - {hi}"


def load(folder: Path) -> dict[tuple[str, str], dict[str, dict[int, Metrics]]]:
    """{(scenario, cluster): {policy: {seed: metrics}}} from the folder's file names."""
    out: dict[tuple[str, str], dict[str, dict[int, Metrics]]] = defaultdict(lambda: defaultdict(dict))
    for f in sorted(folder.glob("*.json")):
        *scenario, cluster, policy, seed = f.stem.split("-")
        if policy in POLICIES and seed.isdigit():
            out[("-".join(scenario), cluster)][policy][int(seed)] = json.loads(f.read_text())
    return out


def table(runs: dict[str, dict[int, Metrics]]) -> list[str]:
    lines = ["| policy | seeds | " + " | ".join(h for h, _, _ in COLUMNS) + " |",
             "|---" * (len(COLUMNS) + 2) + "|"]
    for policy in POLICIES:
        by_seed = runs.get(policy, {})
        if not by_seed:
            continue
        ms = [by_seed[s] for s in sorted(by_seed)]
        cells = []
        for heading, value, fmt in COLUMNS:
            cell = _span([value(m) for m in ms], fmt)
            if heading in PAIRED:
                first = _span([PAIRED[heading](m) for m in ms], fmt)
                cell = f"{first} / {cell}"
            if heading in SECOND:
                cell = f"{_span([value(m) for m in ms], fmt)} / {_span([SECOND[heading](m) for m in ms], fmt)}"
            cells.append(cell)
        seeds = sorted(by_seed)
        lines.append(f"| {policy} | {seeds[0]}-{seeds[-1]} | " + " | ".join(cells) + " |")
    return lines


def targets(key: tuple[str, str], runs: dict[str, dict[int, Metrics]]) -> list[str]:
    seeds = sorted(runs.get("budgets", {}))
    if key not in TARGETS or not seeds:
        return []
    lines = ["| target (budgets) | " + " | ".join(f"seed {s}" for s in seeds) + " | holds on every seed |",
             "|---" * (len(seeds) + 2) + "|"]
    for what, holds in TARGETS[key]:
        marks = []
        for s in seeds:
            others = {p: runs[p][s] for p in POLICIES if p in runs and s in runs[p]}
            try:
                ok = holds(runs["budgets"][s], others)
            except KeyError:  # a baseline run missing for this seed
                marks.append("n/a")
                continue
            marks.append("yes" if ok else "**no**")
        every = "yes" if all(m == "yes" for m in marks) else f"**no** ({marks.count('yes')} of {len(marks)})"
        lines.append(f"| {what} | " + " | ".join(marks) + f" | {every} |")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    for key, runs in sorted(load(Path(argv[1])).items()):
        print(f"#### `{key[0]}` on {key[1]}, 30 days\n")
        print("\n".join(table(runs)))
        t = targets(key, runs)
        if t:
            print()
            print("\n".join(t))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
