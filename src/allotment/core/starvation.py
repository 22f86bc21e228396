"""When a waiting job counts as starving (docs/design/reservation.md, "No starvation for any size").

One owner for the threshold that two rules read:

* the within-team order (``core.priority``): a starving job's score counts the fit term as if it
  fitted, so age eventually beats fit inside a team -- without it a whole-node job or a gang
  scored below every fitting job of its own team's stream (fit weighs up to 1.5 at load >= 2,
  capped age 1.0) and was never its team's head;
* the reservation (``core.reservation.may_hold``): a starving allocated job of an under-served
  team holds the reservation whatever its size, not only a whole-node job.

Waiting is read at the pass's epoch (``core.epoch``), like every time-varying input.
"""

from __future__ import annotations

from typing import Final

STARVING_S: Final = 3600.0  # waited this long since it became eligible: starving


def is_starving(waited_s: float) -> bool:
    return waited_s >= STARVING_S
