"""Boosts in the audit log: one ``"phase": "boost"`` line the first tick a boost counts
(``applied``), the first tick after it expires (``expired``), and when one that counted leaves the
config before its expiry (``withdrawn``).

Why (issue 28, item 4; the Osprey write-up's boost has "a mandatory audit log"): a boost
reorders a team's queue without any action on the cluster, so the action lines alone never show
that it happened, nor when it stopped.  Each line carries who approved it and why, so the log
answers "why did this job jump the queue on Tuesday" without the config's history.

A boost is known by its target, expiry and approver (``boost_key``); which state each was last
logged in is kept in the reconciler's memory (``memory_file``), so a restart logs nothing twice.
Active means what the core reads: the wall time before the boost's expiry (``core.boosts``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal

from allotment.compile.model import Boost
from allotment.reconcile.audit import audit_time
from allotment.timefmt import rfc3339

BoostState = Literal["applied", "expired", "withdrawn"]


def boost_key(b: Boost) -> str:
    return f"{b.target} {rfc3339(b.expires.timestamp())} {b.approver}"


def boost_transitions(
    boosts: Sequence[Boost], logged: Mapping[str, str], now: float, revision: str
) -> tuple[list[str], dict[str, str]]:
    """The audit lines for every boost whose state changed since ``logged`` (key -> the state
    last logged), and the states to remember (expired and withdrawn ones are forgotten once
    they leave the config, so the memory does not grow)."""
    lines: list[str] = []
    keep: dict[str, str] = {}
    current = {boost_key(b): b for b in boosts}
    for key, b in sorted(current.items()):
        state: BoostState = "applied" if now < b.expires.timestamp() else "expired"
        before = logged.get(key)
        if state == "expired" and before is None:
            keep[key] = "expired"  # expired before this state dir saw it count: nothing happened here
            continue
        if before != state:
            lines.append(_line(b, state, now, revision))
        keep[key] = state
    for key in sorted(set(logged) - set(current)):
        if logged[key] == "applied":
            target, expires, approver = key.split(" ", 2)
            lines.append(json.dumps({
                "time": audit_time(now), "phase": "boost", "action": "boost", "event": "withdrawn",
                "target": target, "expires": expires, "approver": approver, "revision": revision,
            }, sort_keys=True))
    return lines, keep


def _line(b: Boost, state: BoostState, now: float, revision: str) -> str:
    return json.dumps({
        "time": audit_time(now), "phase": "boost", "action": "boost", "event": state,
        "target": b.target, "amount": b.amount, "expires": rfc3339(b.expires.timestamp()),
        "approver": b.approver, "reason": b.reason, "revision": revision,
    }, sort_keys=True)
