"""What a tick is told (``Options``) and what it found (``TickResult``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from allotment.backends.actions import ActionResult
from allotment.backends.policy import DEFAULT_TIERS_S
from allotment.reconcile.skew import DEFAULT_MAX_SKEW_S, ClockCheck


@dataclass(frozen=True, slots=True)
class Options:
    cluster: str | None = None  # None: the only (or largest) cluster in the inventory
    dry_run: bool = False
    active: bool = True  # observe jobs, keep the ledger, run the core (False: policy sync only)
    tiers_s: tuple[int, ...] = DEFAULT_TIERS_S
    history_limit: int = 50  # how many commits back to look for one that validates
    health_file: str | None = None  # overrides the inventory's health_file
    ordered: int = 64  # how many head-of-queue jobs get an explicit priority each tick
    max_skew_s: float = DEFAULT_MAX_SKEW_S  # refuse to act beyond this backend clock skew
    interval_s: float = 10.0  # recorded in status, so a reader can tell a stale tick


@dataclass(slots=True)
class TickResult:
    revision: str | None
    results: list[ActionResult] = field(default_factory=list)
    error: str | None = None
    drift: list[str] = field(default_factory=list)
    newest: str | None = None
    newest_rejected: str | None = None  # why the newest commit is not the one driven
    fetch_error: str | None = None  # the source could not be fetched (the local copy is used)
    skew: ClockCheck | None = None

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(r.code for r in self.results).items()))
