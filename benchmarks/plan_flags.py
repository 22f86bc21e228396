"""Measure how often `allot plan` flags a team it should not, and how often it flags the one it
should (issue 26, item 3; docs/plan.md, "Flags").

For a config tree (the bundled example, or the small test tree) this builds a throw-away git
repository and plans, against the same base:

* **no-op plans**: every share of the root's children doubled: the files change (so the plan
  simulates both sides) but no team's absolute share does; every team untouched;
* **single-team plans**: for each leaf in turn, its share cut so that its absolute share drops
  by 10% (its siblings take the rest); every *other* team is untouched.

Each plan runs with the plan's defaults (seeds 1..plan_seeds, the default measured days after
the warm-up), through ``allot plan --format json``, one shared cache: the base side is
simulated once per seed and every plan after the first simulates its head side only.

It counts, over the plans:

* **false alarm**: a plan that flags at least one untouched team (target: under 5% of plans);
* **detection**: a single-team plan whose cut team had unmet demand on the base side (its
  demand above what it was delivered, charged, by at least the cut) and is flagged (target:
  at least 80% of such plans).

Usage:  python benchmarks/plan_flags.py --tree bundled|small [--limit N] [--rounds R]
            [--first-round F] [--cases noop,cut-LEAF,...] [--workers W] [--cache-dir DIR]
            [--out FILE.json]
``--limit`` stops after N plans (a plan of the bundled example takes several minutes of CPU).
``--first-round`` starts at round F (seeds F*k+1 on): rounds never judged before, for a rule
chosen after earlier rounds were seen.  ``--cache-dir`` keeps the simulations between runs (its
key is the simulator's source, not ``plan/``'s, so a change to the flag rule re-judges the same
simulations without running them again).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TREES = {"bundled": ROOT, "small": ROOT / "tests" / "plan" / "data" / "small"}
CUT = 0.10


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    for d in ("budgets", "inventory", "policies"):
        shutil.copytree(src / d, dest / d)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    commit(dest, "base")


def commit(repo: Path, msg: str) -> None:
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qam", msg)


def leaves(repo: Path) -> list[tuple[Path, str]]:
    """(parent budget.yaml, leaf name) of every leaf with a numeric share and a sibling with one,
    sorted; an only child (safety-evals on the bundled example) holds all of its parent, so no
    split of that parent can cut it (the plan would refuse a share of 0)."""
    out = []
    for f in sorted((repo / "budgets").rglob("budget.yaml")):
        doc = yaml.safe_load(f.read_text()) or {}
        kids = doc.get("children") or {}
        if sum(isinstance((v or {}).get("share"), (int, float)) for v in kids.values()) < 2:
            continue
        for name, spec in kids.items():
            child = f.parent / name / "budget.yaml"
            kid = yaml.safe_load(child.read_text()) if child.exists() else {}
            if not (kid or {}).get("children") and isinstance((spec or {}).get("share"), (int, float)):
                out.append((f, name))
    return out


def cut(parent: Path, leaf: str) -> None:
    """Lower ``leaf``'s share so its fraction of its parent (so its absolute share) drops by CUT."""
    doc = yaml.safe_load(parent.read_text())
    kids = doc["children"]
    s = float(kids[leaf]["share"])
    rest = sum(float(v["share"]) for k, v in kids.items() if k != leaf and "share" in v)
    f = (1 - CUT) * s / (s + rest)
    kids[leaf]["share"] = round(f * rest / (1 - f), 4)
    parent.write_text(yaml.safe_dump(doc, sort_keys=False))


def plan(repo: Path, head: str, cache: Path, seeds: str, workers: int) -> dict[str, Any]:
    out = repo.parent / "plan.json"
    out.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "allotment.cli.main", "plan", "--repo", str(repo),
                    "--base", "main", "--head", head, "--format", "json", "--out", str(out),
                    "--cache-dir", str(cache), "--seeds", seeds, "--workers", str(workers)],
                   check=False, capture_output=True)
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _row(name: str, leaf: str | None, seeds: str, doc: dict[str, Any]) -> dict[str, Any]:
    imp = doc.get("impact") or {}
    teams = {t["team"]: t for t in imp.get("teams", [])}
    flagged = sorted(t for t, v in teams.items() if v["impact"]["flagged"])
    target = teams.get(leaf) if leaf else None
    unmet = target is not None and (target["demand_gpu_hours_week_before"]
                                    - target["delivered_gpu_hours_week_before"]
                                    >= CUT * target["entitlement_gpu_hours_week_before"])
    return {
        "plan": name,
        "seeds": seeds,
        "simulated": bool(teams),
        "false_alarm": any(t != leaf for t in flagged),
        "flagged": flagged,
        "cut_team_unmet_demand": unmet,
        # a share cut that moves no entitlement on the cluster (a team held at its max_gpus) is
        # no real change there: reported apart, not dropped from the count fixed in advance
        "cut_moves_entitlement": target is not None and (target["entitlement_gpu_hours_week_after"]
                                                         < target["entitlement_gpu_hours_week_before"]),
        "detected": leaf is not None and leaf in flagged,
        # every team's one-sided p-value and drop, to re-judge a plan by another rule afterwards
        "teams": {t: {"p_value": v["p_value"], "before": v["delivered_gpu_hours_week_before"],
                      "mean": v["impact"]["mean"], "low": v["impact"]["low"], "high": v["impact"]["high"],
                      "entitlement_before": v["entitlement_gpu_hours_week_before"],
                      "entitlement_after": v["entitlement_gpu_hours_week_after"],
                      "judged_by": v.get("judged_by")}
                  for t, v in teams.items()},
        "cut_team": None if target is None else {
            k: target[k] for k in ("demand_gpu_hours_week_before", "entitlement_gpu_hours_week_before",
                                   "entitlement_gpu_hours_week_after", "owed_gpu_hours_week_before",
                                   "delivered_gpu_hours_week_before", "impact", "p_value")},
    }


def table(doc: dict[str, Any]) -> str:
    """The cuts of a saved run (``--out``) as the Markdown table of docs/plan.md: per cut, the
    team's drop and its interval, as a share of what it got and of its entitlement move, and
    whether it clears the untouched teams' 5% line as well as zero (the line of a cut)."""
    lines = ["| cut team | seeds | delivered before | entitlement | Δ delivered (90%) | Δ / move "
             "| 5% line | flagged | beyond the 5% line |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["plans"]:
        team = r["cut_team"]
        if team is None or not r["cut_team_unmet_demand"]:
            continue
        imp, before = team["impact"], team["delivered_gpu_hours_week_before"]
        e_b, e_a = team["entitlement_gpu_hours_week_before"], team["entitlement_gpu_hours_week_after"]
        line = -0.05 * before
        share_of_move = f"{imp['mean'] / (e_a - e_b):.0%}" if e_a != e_b else "no move"
        lines.append(
            f"| {r['plan'].removeprefix('cut-')} | {r['seeds']} | {before:,.0f} | {e_b:,.0f} → {e_a:,.0f} "
            f"| {imp['mean']:+,.0f} ({imp['low']:+,.0f} to {imp['high']:+,.0f}) "
            f"| {share_of_move} | {line:+,.0f} "
            f"| {'yes' if r['detected'] else 'no'} "
            f"| {'yes' if imp['high'] < line else 'no'} |")
    s = doc["summary"]
    lines.append("")
    lines.append(f"plans {s['plans']}, false alarms {s['false_alarm_plans']}, cuts with unmet demand "
                 f"{s['cuts_with_unmet_demand']}, detected {s['detected']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", choices=sorted(TREES), default="small")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many plans (0: all)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat every case on seeds 1-5, 6-10, ...: each round is another draw "
                         "of the default number of seeds")
    ap.add_argument("--seeds-per-round", type=int, default=5,
                    help="seeds per plan (default: the default plan_seeds, 5); round r uses "
                         "seeds r*k+1..r*k+k")
    ap.add_argument("--first-round", type=int, default=0,
                    help="the first round to run (0: seeds 1..k); later rounds are fresh seeds")
    ap.add_argument("--cases", default="",
                    help="only these plans, by name (noop, cut-LEAF; comma-separated): one sweep "
                         "split over processes that share --cache-dir, merged afterwards")
    ap.add_argument("--workers", type=int, default=2, help="allot plan --workers")
    ap.add_argument("--cache-dir", type=Path,
                    help="keep the simulation cache here (default: a temporary folder, removed)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--table", type=Path, metavar="FILE.json",
                    help="print the cuts of a saved --out file as a Markdown table, run nothing")
    args = ap.parse_args()
    if args.table:
        print(table(json.loads(args.table.read_text())))
        return
    tmp = Path(tempfile.mkdtemp(prefix="plan-flags-"))
    repo = tmp / "repo"
    make_repo(TREES[args.tree], repo)
    cases: list[tuple[str, str | None]] = [("noop", None)]
    cases += [(f"cut-{leaf}", leaf) for _, leaf in leaves(repo)]
    if args.cases:
        cases = [c for c in cases if c[0] in set(args.cases.split(","))]
    k = args.seeds_per_round
    rounds = range(args.first_round, args.first_round + args.rounds)
    runs = [(name, leaf, f"{r * k + 1}-{r * k + k}") for r in rounds for name, leaf in cases]
    if args.limit:
        runs = runs[: args.limit]
    cache = args.cache_dir.resolve() if args.cache_dir else tmp / "cache"
    rows = []
    made: set[str] = set()
    for name, leaf, seeds in runs:
        git(repo, "checkout", "-q", "main")
        if name in made:
            doc = plan(repo, name, cache, seeds, args.workers)
            rows.append(_row(name, leaf, seeds, doc))
            print(json.dumps(rows[-1]), flush=True)
            continue
        made.add(name)
        git(repo, "checkout", "-q", "-b", name)
        if leaf is None:
            root = sorted((repo / "budgets").glob("*/budget.yaml"))[0]
            doc = yaml.safe_load(root.read_text())
            for spec in doc["children"].values():
                spec["share"] = spec["share"] * 2
            root.write_text(yaml.safe_dump(doc, sort_keys=False))
        else:
            parent = next(p for p, n in leaves(repo) if n == leaf)
            cut(parent, leaf)
        commit(repo, name)
        t0 = time.perf_counter()
        doc = plan(repo, name, cache, seeds, args.workers)
        rows.append({**_row(name, leaf, seeds, doc), "seconds": round(time.perf_counter() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)
    n = len(rows)
    fa = sum(r["false_alarm"] for r in rows)
    eligible = [r for r in rows if r["cut_team_unmet_demand"]]
    det = sum(r["detected"] for r in eligible)
    summary = {
        "tree": args.tree,
        "seeds_per_plan": k,
        "plans": n,
        "false_alarm_plans": fa,
        "false_alarm_rate": fa / n if n else None,
        "cuts_with_unmet_demand": len(eligible),
        "detected": det,
        "detection_rate": det / len(eligible) if eligible else None,
        "cuts_with_unmet_demand_that_move_entitlement": sum(r["cut_moves_entitlement"] for r in eligible),
        "detected_of_those": sum(r["detected"] for r in eligible if r["cut_moves_entitlement"]),
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "plans": rows}, indent=2) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
