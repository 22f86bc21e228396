"""The documented bounds on every number a trace may hold (docs/trace-format.md, "Bounds").

Why bounds at all: a value a simulator cannot replay must be refused where it is written, with
its line, not found later as an ``OverflowError`` (``work: 1e308``), a ``MemoryError`` (the
metrics keep one value per simulated hour, so ``work: 1e18`` asks for 10^14 of them) or a job
that silently never runs (10^30 GPUs).  The bounds are far beyond any real cluster, so no real
trace meets them, and small enough that the longest replay they allow is cheap:

* times (``submit``, ``deadline``, a node event's ``time``): 0 to 10 years after trace start;
* durations (``work``, ``min_runtime``, ``checkpoint_interval``): up to 366 days;
* ``gpus`` and ``gpus_per_node``: 1 to 2^20 (a million GPUs);
* ``priority``: a 32-bit signed integer.

The canonical reader and every importer ask these functions, so the rule has one owner.
"""

from __future__ import annotations

from typing import TypeGuard

MAX_TIME_S = 10 * 365 * 86400  # 315,360,000 s: ten years after trace start
MAX_DAYS = MAX_TIME_S // 86400  # 3,650: the longest replay horizon or generated scenario
MAX_DURATION_S = 366 * 86400  # 31,622,400 s: one (leap) year
MAX_GPUS = 2**20  # 1,048,576
MAX_PRIORITY = 2**31 - 1


def _fmt(v: float) -> str:
    return f"{v:g}"


def time_problem(key: str, v: float) -> str | None:
    """Why ``v`` cannot be a trace time (seconds after trace start), or None."""
    if v < 0:
        return f"{key} must be 0 or more, got {_fmt(v)}"
    if v > MAX_TIME_S:
        return f"{key} {_fmt(v)} s is beyond the trace bound of {MAX_TIME_S:,} s (10 years)"
    return None


def duration_problem(key: str, v: float, *, positive: bool = False) -> str | None:
    """Why ``v`` cannot be a duration (a negative one is a clock or parse fault, never 0)."""
    if v < 0 or (positive and v == 0):
        bound = "greater than 0" if positive else "0 or more"
        return f"{key} must be {bound}, got {_fmt(v)}"
    if v > MAX_DURATION_S:
        return f"{key} {_fmt(v)} s is beyond the trace bound of {MAX_DURATION_S:,} s (366 days)"
    return None


def gpus_problem(key: str, v: int) -> str | None:
    """Why ``v`` cannot be a GPU count (``gpus``, ``gpus_per_node``), or None."""
    if v < 1:
        return f"{key} must be at least 1, got {v}"
    if v > MAX_GPUS:
        return f"{key} {v:.3g} is beyond the trace bound of {MAX_GPUS:,} GPUs"
    return None


def priority_problem(key: str, v: int) -> str | None:
    if not -MAX_PRIORITY - 1 <= v <= MAX_PRIORITY:
        return f"{key} {v:.3g} is outside the 32-bit signed integer range"
    return None


def time_ok(v: object) -> bool:
    """The fast path's test: a plain finite number inside the time bound."""
    return type(v) in (int, float) and 0 <= v <= MAX_TIME_S  # type: ignore[operator]


def duration_ok(v: object, positive: bool = False) -> bool:
    return (
        type(v) in (int, float)
        and (v > 0 if positive else v >= 0)  # type: ignore[operator]
        and v <= MAX_DURATION_S  # type: ignore[operator]
    )


def gpus_ok(v: object) -> TypeGuard[int]:
    return type(v) is int and 1 <= v <= MAX_GPUS
