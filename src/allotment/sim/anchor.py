"""t = 0 of a simulated run, fixed unless asked otherwise (issue: results depended on the day).

A run's t = 0 is midnight UTC of the compile date (``--at``): maintenance windows and boost
expiries, written as wall-clock dates in the config, become seconds from it.  With today as the
default, the same command gave different figures from one day to the next, so ``allot simulate``
and ``allot explain`` default to ``DEFAULT_T0`` instead: Monday 2026-11-30, the start of the week
in which the bundled example's maintenance windows and boost fall.  Pass ``--at`` to simulate
another week.  A maintenance window that ended at or before t = 0 is not part of the run."""

from __future__ import annotations

import datetime as dt

DEFAULT_T0 = dt.date(2026, 11, 30)


def t0_of(at: dt.date) -> dt.datetime:
    """The wall time of t = 0 for a run compiled at ``at`` (core.context uses the same rule)."""
    return dt.datetime.combine(at, dt.time(), tzinfo=dt.UTC)
