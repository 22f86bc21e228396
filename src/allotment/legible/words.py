"""Human units for the views: ordinals, durations, clock times, GPU-hours.  Words first,
numbers after, so a researcher reads "~26 min", not ``1560.0``."""

from __future__ import annotations

import datetime as dt


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def duration(seconds: float) -> str:
    """A rounded span: '45 s', '26 min', '2 h', '3 h 20 min', '2.5 days'."""
    s = max(0.0, seconds)
    if s < 90:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    if s < 86400:
        h, rem = divmod(round(s / 60), 60)
        return f"{h} h" if rem == 0 or h >= 10 else f"{h} h {rem} min"
    return f"{s / 86400:.1f} days"


def clock(t0: dt.datetime, t: float, *, with_day: bool = True) -> str:
    """Wall time of run time ``t`` for a person: 'Tue 1 Dec 2026 14:02 UTC' (the year and the
    zone always: a run may be of any year, and its reader in any zone)."""
    when = (t0 + dt.timedelta(seconds=t)).astimezone(dt.UTC)
    return when.strftime("%a %-d %b %Y %H:%M UTC") if with_day else when.strftime("%H:%M UTC")


def utc(t0: dt.datetime, t: float) -> str:
    """Wall time of run time ``t`` for a machine: RFC 3339 UTC (``allotment.timefmt``)."""
    from allotment.timefmt import rfc3339

    return rfc3339((t0 + dt.timedelta(seconds=t)).timestamp())


def gpu_hours(x: float) -> str:
    if x >= 10_000:
        return f"{x / 1000:.0f}k GPU-h"
    if x >= 100:
        return f"{x:,.0f} GPU-h"
    return f"{x:.1f} GPU-h"


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def parse_time(text: str, t0: dt.datetime) -> float:
    """``--at``: seconds from t0 ('3600'), a span from t0 ('2d', '26h', '90m'), or an ISO time;
    within a trace's bound of t0 either way (``traces.bounds.MAX_TIME_S``: a time no run can
    reach would overflow the clock that prints it)."""
    from allotment.errors import UsageError
    from allotment.traces.bounds import MAX_TIME_S

    t = _seconds_at(text, t0)
    if t != t:
        raise UsageError(f"--at {text!r}: not a number")
    if not abs(t) <= MAX_TIME_S:
        raise UsageError(f"--at {text!r}: more than {MAX_TIME_S // 86400:,} days from the run's start")
    return t


def _seconds_at(text: str, t0: dt.datetime) -> float:
    from allotment.durations import parse_duration
    from allotment.errors import UsageError

    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(parse_duration(text))
    except (ValueError, UsageError):
        pass
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--at {text!r}: expected seconds from the run's start, a span like 26h, or an ISO time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return (when - t0).total_seconds()
