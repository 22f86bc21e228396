"""The one time format people and machines read: RFC 3339 in UTC with a ``Z`` (Kubernetes',
Flux's and Prometheus' own), to the second, or to the millisecond where events within a second
must stay apart (log lines, audit records, operator requests).  Every writer of a wall-clock
time calls ``rfc3339`` and every reader ``parse_rfc3339``, so the format has one owner.

Run-relative seconds (a simulation's ``t``) are not wall-clock times; where a format keeps them
it names them ``t_s``."""

from __future__ import annotations

import datetime as dt


def rfc3339(unix_s: float, *, ms: bool = False) -> str:
    t = dt.datetime.fromtimestamp(float(unix_s), dt.UTC)
    return t.isoformat(timespec="milliseconds" if ms else "seconds").replace("+00:00", "Z")


def parse_rfc3339(text: str) -> float:
    """Unix seconds of an RFC 3339 time; ValueError for one without a zone (a time whose zone
    is a guess is refused, not read as local)."""
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"time {text!r} has no zone (expected RFC 3339, like 2026-12-01T11:38:54Z)")
    return when.timestamp()
