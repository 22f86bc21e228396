"""The fair-share recalculation period, as a pure quantization of time (like Slurm's
``PriorityCalcPeriod``, but without hidden history).

Everything in a pass that varies continuously with time -- window usage (Fair Tree ranks and the
reclaim measure), job ages, deadline slack, which boosts are active, the lost work that orders
victims -- is evaluated at the *epoch* ``floor(now / period) * period`` (``Policy.fairshare_period_s``;
0 means at ``now`` itself).  Between two epoch boundaries those inputs are constant, so a pass's
outcome only changes at an event (arrival, completion, end of a protection, health change) or at
an epoch boundary, and a driver that runs a pass at each of those instants (``Scheduler.wake_at``)
takes the same decisions as one that runs passes more often.
"""

from __future__ import annotations

import math


def epoch_of(now: float, period_s: float) -> float:
    """The time at which time-varying inputs are evaluated for a pass at ``now``."""
    if period_s <= 0:
        return now
    return math.floor(now / period_s) * period_s


def next_epoch(now: float, period_s: float) -> float:
    """The first epoch boundary strictly after ``now`` (inf without a period)."""
    if period_s <= 0:
        return math.inf
    return (math.floor(now / period_s) + 1) * period_s
