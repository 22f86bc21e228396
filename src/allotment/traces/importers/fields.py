"""Parsing helpers shared by the text importers: numbers, Slurm durations, timestamps.

Each returns a value or raises ValueError with a message fit for a ``file:line:col`` diagnostic.
"""

from __future__ import annotations

import datetime as dt
import math
import re

from allotment.durations import parse_duration

_SLURM_ELAPSED = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


def parse_int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text!r}") from None


def parse_number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {text!r}")
    return v


def parse_elapsed(text: str, what: str = "duration") -> float:
    """Seconds from ``[D-]HH:MM:SS``, ``MM:SS``, a bare number of seconds or ``2h``-style text."""
    s = text.strip()
    m = _SLURM_ELAPSED.match(s)
    if m:
        days, hours, minutes, seconds = m.groups()
        if hours is None:  # MM:SS
            hours, minutes = "0", minutes
        return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    try:
        return float(parse_duration(s)) if not _is_float(s) else parse_number(s, what)
    except ValueError:
        raise ValueError(f"{what} must be seconds, [D-]HH:MM:SS or like 2h, got {text!r}") from None


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def parse_timestamp(text: str, what: str = "timestamp") -> float:
    """Seconds from an ISO date-time (``2024-03-01T12:00:00``, optional zone) or a number.

    Naive times are read as UTC: only differences matter to a trace, and treating local time as
    UTC avoids the daylight-saving jumps a local reading would introduce.
    """
    s = text.strip()
    if _is_float(s):
        return parse_number(s, what)
    try:
        t = dt.datetime.fromisoformat(s.replace(" ", "T", 1) if " " in s else s)
    except ValueError:
        raise ValueError(f"{what} must be an ISO date-time or seconds, got {text!r}") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.timestamp()
