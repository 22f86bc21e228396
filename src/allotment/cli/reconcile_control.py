"""``allot reconcile suspend|resume|now``: an operator's requests to a running reconciler
(Flux's ``flux suspend``, ``flux resume`` and ``flux reconcile``).  Each is recorded in the
audit log with who asked and why, and the reconciler takes it up within a second, between ticks
or at the next one.  ``now`` waits for the tick it asked for and exits 0 when the reconciler is
then Ready, 1 when it is not (or no tick came within ``--timeout``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from allotment.durations import parse_duration
from allotment.errors import UsageError
from allotment.reconcile.control import request
from allotment.reconcile.status import STATUS_FILE, conditions, is_ready, read_status
from allotment.timefmt import rfc3339

HELP = {
    "suspend": "apply nothing until resumed (it keeps observing and charging usage)",
    "resume": "apply again, from the next tick (started at once)",
    "now": "tick now and wait for it (Flux: flux reconcile)",
}


def register(sub: argparse._SubParsersAction[Any]) -> None:
    for verb, words in HELP.items():
        p = sub.add_parser(verb, help=words, description=__doc__)
        p.add_argument(
            "--state", default=Path(".allot-reconcile"), type=Path, help="the reconciler's state dir"
        )
        if verb == "suspend":
            p.add_argument("--reason", default="", help="why (recorded and shown in the status)")
        if verb == "now":
            p.add_argument("--timeout", default="5m", help="how long to wait for the tick (default 5m)")
        p.set_defaults(func=run, verb=verb)


def run(args: argparse.Namespace) -> int:
    state: Path = args.state
    timeout = None
    if args.verb == "now":
        try:
            timeout = float(parse_duration(args.timeout))
        except ValueError as exc:
            raise UsageError(f"--timeout: {exc}") from None
    ctl = request(state, args.verb, time.time(), getattr(args, "reason", ""))
    now = ctl.requested_at or 0.0
    if timeout is None:
        what = "suspended" if ctl.suspended is not None else "resumed"
        print(f"{state}: {what} (recorded at {rfc3339(now)}; the reconciler takes it up within a second)")
        return 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (state / STATUS_FILE).exists():
            st = read_status(state)
            if st.last_handled_reconcile_at is not None and st.last_handled_reconcile_at >= now:
                t = time.time()
                ready = next(c for c in conditions(st, t) if c.type == "Ready")
                print(f"{state}: ticked at {rfc3339(st.last_tick)}: Ready {ready.status} {ready.reason}: {ready.message}")
                return 0 if is_ready(st, t) else 1
        time.sleep(0.2)
    print(f"{state}: no tick took up the request within {args.timeout} (is `allot reconcile --state {state}` running?)")
    return 1
