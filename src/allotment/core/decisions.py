"""What one scheduling pass decides.  Every item carries the reason ``allot explain`` shows.

A reconciler applies these in the order: drains and preemptions first (they free GPUs), then
starts; reservations and the pending order are advisory (what a backend's priority field should
express).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from allotment.core.session_grace import Notice
from allotment.core.snapshot import KeptHold


@dataclass(frozen=True, slots=True)
class Start:
    job_id: str
    placement: tuple[tuple[str, int], ...]  # (node, gpus)
    allocated: bool  # charged (False: runs as unallocated, preemptible at once)
    reason: str
    # a backfill on a reserved node that yields to reservations after its protection: a driver
    # must remember it and report it back (``RunningJob.yields_to_reservation``)
    yields: bool = False


@dataclass(frozen=True, slots=True)
class Preemption:
    job_id: str
    for_job: str | None  # the job that needed the GPUs (None for drains)
    rule: str  # "unallocated" | "reservation" | "within-team" | "reclaim" | "debug-slice" | "consolidate" | "free-packing" | "drain"
    lost_work: float  # seconds of progress lost (since the last checkpoint)
    reason: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """A pending job the policy rejects at submission (``core.contract.refusal``): the
    simulator never queues it; a live cluster that accepted it is told to cancel it."""

    job_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Reservation:
    job_id: str
    nodes: tuple[str, ...]
    at: float  # the estimated time the reserved nodes are all free
    reason: str


@dataclass(frozen=True, slots=True)
class NodeReport:
    node: str
    state: str  # "draining" | "ready-for-repair"
    waiting_on: tuple[str, ...]  # jobs still protected on it
    needs_human: bool  # some job there stays protected longer than the policy threshold
    reason: str


class Ranked(NamedTuple):
    """One pending job's place in the order, with the metrics behind it.

    A named tuple, not a frozen dataclass like the records above, and its ``reason`` written
    only when read: ``decide()`` makes one per pending job on every reconciler tick (10,000 in
    issue 28's item-5 bench) while the reconciler reads the reason of its first ``ordered``
    (64) only.  A frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``: 14.7 ms for 10,000 rows with their reasons formatted, against
    6.9 ms as a named tuple and less again unformatted (interpreted, 2026-12-05).  Immutable
    and named all the same; two rows are equal when their fields are."""

    job_id: str
    account: str
    position: int
    tier: int  # 0: account below its entitlement (guaranteed); 1: borrowing beyond it; 2: unallocated
    fair_share: tuple[float, ...]  # level fair share usage/share along the path, root first
    priority: float  # within-team priority score
    why: str  # the reason, up to the score when ``scored``
    scored: bool = True  # the reason ends in the score (3 decimals)

    @property
    def reason(self) -> str:
        return f"{self.why}{self.priority:.3f}" if self.scored else self.why


@dataclass(frozen=True, slots=True)
class Decisions:
    starts: tuple[Start, ...] = ()
    preemptions: tuple[Preemption, ...] = ()
    reservations: tuple[Reservation, ...] = ()
    nodes: tuple[NodeReport, ...] = ()
    order: tuple[Ranked, ...] = ()
    # the latest time a driver should run the next pass even if nothing happens (a protection
    # ends, an epoch boundary while work waits): Scheduler.wake_at; filled in by decide()
    wake_at: float | None = None
    refusals: tuple[Refusal, ...] = ()
    # sessions told this pass that they will be stopped after their grace (core.session_grace)
    notices: tuple[Notice, ...] = ()
    # knob keep_hold: the holds kept after this pass, for the next tick's Snapshot.kept_holds; filled in by decide()
    kept_holds: tuple[KeptHold, ...] = ()
