"""Entitlement tiers: which queues go first (docs/design/entitlement-tiers.md).

Tier 0: the account runs fewer allocated GPUs than it is owed now (its entitlement scaled to the
healthy capacity) -- its work is guaranteed and may reclaim.  Tier 1: it runs at or above that
(borrowing).  Tier 2: an account's unallocated work, which only fills what allocated work leaves.
Within a tier, queues follow the Fair Tree order (``core.fairshare``).
"""

from __future__ import annotations

GUARANTEED, BORROWING, UNALLOCATED = 0, 1, 2

TIER_WHY = (
    "its account runs below its entitlement",
    "its account runs at or above its entitlement",
    "unallocated work: fills what allocated work leaves",
)


def tier(unallocated_queue: bool, running_allocated_gpus: int, owed_gpus: float) -> int:
    """The tier of a queue; see the module docstring."""
    if unallocated_queue:
        return UNALLOCATED
    return GUARANTEED if running_allocated_gpus < owed_gpus else BORROWING
