"""Why a row of issue 26's table came out as it did: one seed of `allot plan`'s simulation of a
change, replayed with its event log kept, read per team over the measured days (docs/plan.md,
"Issue 26's table, rerun").

It replays exactly what `allot plan` simulates for that seed (``plan.impact_units``: the base's
workload, the warm-up, the head switched in where the switch carries the state over, else warmed
up alone) and prints, per team of ``--teams``, for each side over the measured part: charged
GPU-hours (from ``start``/``preempt``/``end`` events), jobs started, the preemptions it suffered
by rule, and the preemptions its jobs caused (``by``), each by the rule and the victim's team.

Usage:  PYTHONPATH=src python benchmarks/plan_rows_events.py --repo REPO --head BRANCH
            --teams chem-llm,materials [--seed 1] [--cluster h100]
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from allotment.plan.diff import diff_configs
from allotment.plan.gitread import open_repo, read_revision_files, resolve
from allotment.plan.impact import DEFAULT_DAYS, DEFAULT_SCENARIO, warmup_days
from allotment.plan.impact_units import Setup, for_side, workload
from allotment.plan.revision import compile_files
from allotment.sim import switch
from allotment.sim.latency import NONE
from allotment.sim.switchable import switch_refusal


def _events(sim: Any) -> list[Any]:
    sim.log.kept = []
    return sim.log.kept  # type: ignore[no-any-return]


def _read(events: list[Any], start: float, end: float, teams: set[str]) -> dict[str, Any]:
    """Per team over [start, end): charged GPU-hours, starts, preemptions suffered and caused."""
    account = {}
    running: dict[str, tuple[float, float]] = {}  # job -> (start, charged reference GPUs)
    out: dict[str, Any] = defaultdict(lambda: {"charged_h": 0.0, "starts": 0,
                                               "preempted": Counter(), "caused": Counter()})

    def stop(job: str, t: float) -> None:
        if job in running:
            t0, rate = running.pop(job)
            lo, hi = max(t0, start), min(t, end)
            if hi > lo and account[job] in teams:
                out[account[job]]["charged_h"] += rate * (hi - lo) / 3600.0

    for e in events:
        if e.job is not None and e.account is not None:
            account[e.job] = e.account
        if e.event == "start":
            running[e.job] = (e.t, e.charged_gpus or 0.0)
            if start <= e.t < end and e.account in teams:
                out[e.account]["starts"] += 1
        elif e.event in ("preempt", "end"):
            stop(e.job, e.t)
            if e.event == "preempt" and start <= e.t < end:
                if e.account in teams:
                    out[e.account]["preempted"][e.rule] += 1
                by = account.get(e.by or "")
                if by in teams:
                    out[by]["caused"][f"{e.rule} of {e.account}"] += 1
    for job in list(running):
        stop(job, end)
    return dict(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--base", default="main")
    ap.add_argument("--head", required=True)
    ap.add_argument("--teams", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cluster")
    ap.add_argument("--days", type=float, default=DEFAULT_DAYS)
    ap.add_argument("--at", default=dt.date.today().isoformat())
    args = ap.parse_args()
    at = dt.date.fromisoformat(args.at)
    with open_repo(args.repo) as repo:
        base_sha, head_sha = resolve(repo, args.base).sha, resolve(repo, args.head).sha
        base = compile_files(read_revision_files(repo, base_sha), at, base_sha)
        head = compile_files(read_revision_files(repo, head_sha), at, head_sha)
    cluster = args.cluster or base.largest_cluster()
    renames = tuple(diff_configs(base, head).renamed)
    warm = warmup_days(base, cluster)
    sw = switch_refusal(base, head, cluster, renames)
    s = Setup(base, head, renames, cluster, args.days, DEFAULT_SCENARIO, None, NONE, warm, sw is None)
    w = workload(s, args.seed)
    start = warm * 86400.0
    b = switch.start(base, for_side(w, base, {}), cluster=cluster, days=s.horizon_days,
                     seed=args.seed)
    kept_b = _events(b)
    switch.pause(b, start)
    if sw is None:
        h = switch.switched(b, head)
        h.log.kept = list(kept_b)
        kept_h = h.log.kept
    else:
        h = switch.start(head, for_side(w, head, dict(renames)), cluster=cluster,
                         days=s.horizon_days, seed=args.seed)
        kept_h = _events(h)
    switch.finish(b)
    switch.finish(h)
    end = b.end
    teams = set(args.teams.split(","))
    print(f"cluster {cluster}, seed {args.seed}, measured [{start / 86400:g} d, {end / 86400:g} d); "
          f"head {'switched in after the base warm-up' if sw is None else 'warmed up alone: ' + sw}")
    for side, kept in (("base", kept_b), ("head", kept_h)):
        per = _read(kept, start, end, teams)
        for team in sorted(teams):
            r = per.get(team, {"charged_h": 0.0, "starts": 0, "preempted": {}, "caused": {}})
            weeks = (end - start) / (7 * 86400.0)
            print(f"{side} {team}: charged {r['charged_h'] / weeks:,.0f} ref GPU-h/week, "
                  f"{r['starts']} starts, preempted {dict(r['preempted'])}, caused {dict(r['caused'])}")


if __name__ == "__main__":
    main()
