"""``allot status``: the budget tree per node (entitlement, window usage, ratio, rank, running
and pending GPUs, drained nodes) of a saved run (``--run DIR``) or the live reconciler
(``--state DIR``); ``--reconciler`` shows what the reconciler itself last did (conditions,
revisions, last error, action counts, "last tick N s ago") from ``status.json``, judged against
the clock (a stale last tick is not Ready): exit 0 when Ready, 1 when not."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

from allotment.errors import UsageError
from allotment.reconcile.status import (
    STATUS_FILE,
    is_ready,
    read_status,
    render_text,
    status_json,
)


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reconciler", action="store_true", help="the reconciler's own status (conditions, revisions)"
    )
    p.add_argument("--run", type=Path, metavar="DIR", help="a saved run (allot simulate --save DIR)")
    p.add_argument(
        "--state", default=Path(".allot-reconcile"), type=Path, help="the reconciler's state dir"
    )
    p.add_argument("--cluster", help="check the view is of this cluster")
    p.add_argument("--at", dest="time", metavar="TIME", help="with --run: seconds or a span from the run's start (default: its end)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    p.add_argument("--json", action="store_true", help="machine-readable output (= --format json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.reconciler:
        return _reconciler(args)
    from allotment.legible.tables import tree_table

    as_json = args.json or args.format == "json"
    if args.run is not None:
        from allotment.legible.rundir import read_run
        from allotment.legible.runview import cluster_view
        from allotment.legible.words import parse_time

        rd = read_run(args.run)
        view = cluster_view(rd, parse_time(args.time, rd.t0) if args.time else None)
        t0 = rd.t0
    else:
        from allotment.legible.livestate import applied_config, read_state
        from allotment.legible.liveview import live_view

        st = read_state(args.state)
        view = live_view(st, applied_config(st))
        t0 = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    if args.cluster and args.cluster != view.cluster:
        raise UsageError(f"--cluster {args.cluster}: this view is of cluster {view.cluster}")
    if as_json:
        print(json.dumps(view.to_json(t0 if args.run is not None else None), sort_keys=True, indent=2))
    else:
        print(tree_table(view, t0), end="")
    return 0


def _reconciler(args: argparse.Namespace) -> int:
    if not (args.state / STATUS_FILE).exists():
        raise UsageError(
            f"no reconciler status in {args.state} (has `allot reconcile --state {args.state}` run?)"
        )
    status = read_status(args.state)
    now = time.time()
    if args.json or args.format == "json":
        print(json.dumps(status_json(status, now), sort_keys=True, indent=2))
    else:
        print(render_text(status, now), end="")
    return 0 if is_ready(status, now) else 1
