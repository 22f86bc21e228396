"""``allot status --reconciler``: what the reconciler last did (conditions, revisions, last
error, action counts, "last tick N s ago"), read from ``status.json`` in its state dir and
judged against the clock (a stale last tick is not Ready); ``--json`` prints the same, with the
conditions as judged now.  Exit 0 when Ready, 1 when not (Stalled, Reconciling or stale)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from allotment.errors import UsageError
from allotment.reconcile.status import (
    STATUS_FILE,
    is_ready,
    read_status,
    render_text,
    status_json,
)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("status", help="show the reconciler's status", description=__doc__)
    p.add_argument(
        "--reconciler", action="store_true", help="the reconciler's status (the only kind so far)"
    )
    p.add_argument(
        "--state", default=".allot-reconcile", type=Path, help="the reconciler's state dir"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.reconciler:
        raise UsageError("say which status: --reconciler")
    if not (args.state / STATUS_FILE).exists():
        raise UsageError(
            f"no reconciler status in {args.state} (has `allot reconcile --state {args.state}` run?)"
        )
    status = read_status(args.state)
    now = time.time()
    if args.json:
        print(json.dumps(status_json(status, now), sort_keys=True, indent=2))
    else:
        print(render_text(status, now), end="")
    return 0 if is_ready(status, now) else 1
