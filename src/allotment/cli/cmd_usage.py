"""``allot usage --state DIR``: GPU-hours per team or user from the reconciler's usage ledger,
against each team's entitlement over the same span."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from allotment.durations import parse_duration
from allotment.errors import UsageError


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", default=Path(".allot-reconcile"), type=Path, help="the reconciler's state dir")
    p.add_argument("--by", choices=("team", "user"), default="team", help="one row per team or per user")
    p.add_argument("--since", default="7d", help="span back from the last observation (default 7d)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from allotment.legible.livestate import applied_config, read_state
    from allotment.legible.liveview import live_view
    from allotment.legible.usage import usage_rows
    from allotment.legible.words import gpu_hours, percent

    try:
        since = float(parse_duration(args.since))
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None
    st = read_state(args.state)
    config = applied_config(st)
    cluster = live_view(st, config).cluster
    rows = usage_rows(st, config, cluster, since_s=since, by=args.by)
    if args.format == "json":
        print(json.dumps({"cluster": cluster, "since_s": since, "by": args.by, "rows": [asdict(r) for r in rows]},
                         sort_keys=True, indent=2))
        return 0
    print(f"usage on {cluster} over the last {args.since}, by {args.by} (reference GPU-hours, from the ledger)")
    print(f"{args.by:<28} {'used':>12} {'owed':>12} {'used/owed':>10}")
    for r in rows:
        owed = "-" if r.owed_gpu_hours is None else gpu_hours(r.owed_gpu_hours)
        ratio = percent(r.gpu_hours / r.owed_gpu_hours) if r.owed_gpu_hours else "-"
        print(f"{r.key:<28} {gpu_hours(r.gpu_hours):>12} {owed:>12} {ratio:>10}")
    return 0
