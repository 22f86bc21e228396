"""Print docs/results.md's "Issue 29: the dedicated pool" tables: per workload and cluster, one
row per seed and variant (``today``: grace and restore, no pool; ``poolP``: a pool of P nodes, no
notice; ``bothP``: the pool and the notice), and the targets -- issue 29's (interactive p90 <= 5
min, no session stopped without notice) and issue 25's Ai2 table (scripts/headline_tables.py,
the one owner of those) -- checked seed by seed for each variant.

Usage: python scripts/pool_tables.py DIR   (files SCENARIO-CLUSTER-POLICY-VARIANT-SEED.json,
written by scripts/pool_sweep.sh from ``allot simulate --json``)
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from headline_tables import TARGETS, Target, _teams

Metrics = dict[str, Any]
ISSUE_29: tuple[Target, ...] = (
    ("interactive p90 <= 5 min", lambda b, o: b["wait"]["interactive"]["p90"] <= 300),
    ("no session stopped without notice", lambda b, o: b["sessions"]["stopped_without_notice"] == 0),
)
HEAD = ("| seed | variant | delivered/owed | teams >= 0.95 (`ratio` / `received`) | lowest team | occupancy "
        "| debug p90 s | interactive p50 / p90 s | large p90 s | lost GPU-h "
        "| sessions stopped / without notice | lent taken back |")


def _variant_key(v: str) -> tuple[int, int]:
    order = {"today": 0, "pool": 1, "both": 2}
    base = v.rstrip("0123456789")
    return order.get(base, 9), int(v[len(base):] or 0)


def load(folder: Path) -> dict[tuple[str, str], dict[tuple[str, str], dict[int, Metrics]]]:
    """{(scenario, cluster): {(policy, variant): {seed: metrics}}} from the file names."""
    out: dict[tuple[str, str], dict[tuple[str, str], dict[int, Metrics]]] = defaultdict(lambda: defaultdict(dict))
    for f in sorted(folder.glob("*.json")):
        *scenario, cluster, policy, variant, seed = f.stem.split("-")
        out[("-".join(scenario), cluster)][(policy, variant)][int(seed)] = json.loads(f.read_text())
    return out


def row(seed: int, variant: str, m: Metrics) -> str:
    w = m["wait"]
    s = m["sessions"]
    cells = [
        str(seed), variant, f"{m['delivered_over_owed']:.3f}",
        f"{_teams(m, 'ratio', 0.95)} / {_teams(m, 'received', 0.95)}",
        f"{min(t['ratio'] for t in m['teams'].values()):.3f}", f"{m['occupancy']:.3f}",
        f"{w['debug']['p90']:.0f}", f"{w['interactive']['p50']:.0f} / {w['interactive']['p90']:.0f}",
        f"{w['large']['p90']:.0f}", f"{m['lost_gpu_hours']:,.0f}",
        f"{s['stopped']} / {s['stopped_without_notice']}", str(m["preemptions_by_rule"].get("session-pool", 0)),
    ]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    for key, runs in sorted(load(Path(argv[1])).items()):
        variants = sorted({v for p, v in runs if p == "budgets"}, key=_variant_key)
        seeds = sorted({s for (p, _), by in runs.items() if p == "budgets" for s in by})
        print(f"#### `{key[0]}` on {key[1]}, budgets, 30 days\n")
        print(HEAD)
        print("|---" * HEAD.count(" | ") + "|---|")
        for s in seeds:
            for v in variants:
                if s in runs[("budgets", v)]:
                    print(row(s, v, runs[("budgets", v)][s]))
        print()
        print("| target | " + " | ".join(variants) + " |")
        print("|---" * (len(variants) + 1) + "|")
        for what, holds in (*ISSUE_29, *TARGETS.get(key, ())):
            cells = []
            for v in variants:
                ok, n = 0, 0
                for s in seeds:
                    b = runs[("budgets", v)].get(s)
                    if b is None:
                        continue
                    others = {p: by[s] for (p, pv), by in runs.items() if pv == "today" and s in by}
                    try:
                        ok += holds(b, others)
                    except KeyError:  # a baseline missing for this seed
                        continue
                    n += 1
                cells.append("n/a" if n == 0 else ("yes" if ok == n == len(seeds) else f"**no** ({ok} of {n})"))
            print(f"| {what} | " + " | ".join(cells) + " |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
