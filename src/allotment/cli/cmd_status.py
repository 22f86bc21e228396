"""``allot status --reconciler``: what the reconciler last did (conditions, revisions, last
error, action counts), read from ``status.json`` in its state dir; ``--json`` prints that file."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from allotment.errors import UsageError
from allotment.reconcile.status import STATUS_FILE, load_status, render_text


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
    status = load_status(args.state)
    if args.json:
        print(json.dumps(asdict(status), sort_keys=True, indent=2))
    else:
        print(render_text(status), end="")
    stalled = status.condition("Stalled")
    return 1 if stalled is not None and stalled.status else 0
