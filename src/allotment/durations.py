"""Durations as people write them in config: ``90s``, ``15m``, ``8h``, ``7d`` (and ``1h30m``).

Kept in one place so the schema pattern, the parser and the formatter can never disagree.
"""

from __future__ import annotations

import re

UNITS: dict[str, int] = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?[smhdw])+$"
_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smhdw])")
_WHOLE = re.compile(DURATION_PATTERN)
MAX_FLAG_S = 366 * 86400  # the longest wall-clock flag ``parse_seconds`` takes


def parse_duration(text: str | int | float) -> int:
    """Return whole seconds. A bare number is taken as seconds. Raises ValueError with a message
    fit to show a user."""
    if isinstance(text, bool):
        raise ValueError(f"expected a duration like 15m or 8h, got {text!r}")
    if isinstance(text, (int, float)):
        if text < 0:
            raise ValueError(f"a duration cannot be negative: {text}")
        return int(text)
    s = text.strip()
    if s.isdigit():
        return int(s)
    return round(_written(s, text))


def _written(s: str, text: str) -> float:
    """The seconds ``s`` (``text`` stripped) writes with units, like ``1h30m``; the one grammar."""
    if not _WHOLE.match(s):
        raise ValueError(f"malformed duration {text!r}: write a number and a unit, like 90s, 15m, 8h or 7d")
    return sum(float(n) * UNITS[u] for n, u in _PART.findall(s))


def parse_seconds(text: str) -> float:
    """Seconds as written, fractions kept (``0.3s`` is 0.3, where ``parse_duration`` rounds it
    to 0): for the command line's wall-clock flags (a tick interval, a timeout, a lease), where
    a sub-second value is meant as written.  Same grammar and messages as ``parse_duration``."""
    s = text.strip()
    try:
        value = float(s)
    except ValueError:
        value = _written(s, text)
    if not 0 <= value <= MAX_FLAG_S:  # NaN too; beyond a year a clock's arithmetic overflows
        raise ValueError(f"{text}: expected 0 to 366d")
    return value


def format_duration(seconds: float) -> str:
    """Shortest exact form: 28800 -> '8h', 5400 -> '1h30m', 0 -> '0s'."""
    rest = round(seconds)
    if rest == 0:
        return "0s"
    out = []
    for unit in ("d", "h", "m", "s"):
        n, rest = divmod(rest, UNITS[unit])
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)
