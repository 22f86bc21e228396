"""What step 3 of a pass computes (``core.scheduler``), constant for the whole pass, and the key
by which a round visits queues."""

from __future__ import annotations

from collections.abc import Mapping

from allotment.core.fairshare import LeafRank

QueueKey = tuple[int, int, str]  # (tier, Fair Tree rank, queue name)


class PassInputs:
    """What step 3 computes; constant for the whole pass.  Read-only by convention; a plain
    slotted class rather than a frozen dataclass (mypyc runs a frozen dataclass's ``__init__``
    as interpreted Python, and its fields are read on every visit).  The tables are typed
    ``dict``, not ``Mapping``: under mypyc a ``Mapping``'s ``get`` is a generic method call (1.2 M
    of them in the donors' table alone over a 30-day run)."""

    __slots__ = ("boosts", "load", "measure", "now", "owed", "rank_index", "ranks", "t")

    def __init__(self, now: float, t: float, owed: dict[str, float], ranks: tuple[LeafRank, ...],
                 rank_index: dict[str, int], measure: dict[str, float], boosts: Mapping[str, float],
                 load: float) -> None:
        self.now = now
        self.t = t  # the epoch: time-varying inputs are read here
        self.owed = owed
        self.ranks = ranks
        self.rank_index = rank_index
        self.measure = measure  # reclaim measure per leaf
        self.boosts = boosts
        self.load = load
