"""What step 3 of a pass computes (``core.scheduler``), constant for the whole pass, and the key
by which a round visits queues."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from allotment.core.fairshare import LeafRank

QueueKey = tuple[int, int, str]  # (tier, Fair Tree rank, queue name)


@dataclass(frozen=True, slots=True)
class PassInputs:
    """What step 3 computes; constant for the whole pass."""

    now: float
    t: float  # the epoch: time-varying inputs are read here
    owed: Mapping[str, float]
    ranks: tuple[LeafRank, ...]
    rank_index: Mapping[str, int]
    measure: Mapping[str, float]  # reclaim measure per leaf
    boosts: Mapping[str, float]
    load: float
