"""When a waiting job counts as starving (docs/design/reservation.md, "No starvation for any size").

One owner for the threshold: a starving allocated job of an under-served team may hold the
reservation whatever its size, not only a whole-node job (``core.reservation.may_hold``), and the
reservation's holder is the oldest such job (``Scheduler._holder_in``), offered first in its
queue -- so age beats fit for it, although the within-team score ranks fitting jobs above it
(fit weighs up to 1.5 at load >= 2, capped age 1.0; docs/design/priority.md).

Waiting is read at the pass's epoch (``core.epoch``), like every time-varying input.
"""

from __future__ import annotations

from typing import Final

STARVING_S: Final = 3600.0  # waited this long since it became eligible: starving


def is_starving(waited_s: float) -> bool:
    return waited_s >= STARVING_S
