"""What one scheduling pass decides.  Every item carries the reason ``allot explain`` shows.

A reconciler applies these in the order: drains and preemptions first (they free GPUs), then
starts; reservations and the pending order are advisory (what a backend's priority field should
express).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from allotment.core.session_grace import Notice
from allotment.core.set_once import refuse_delete, refuse_second_write
from allotment.core.snapshot import KeptHold


@dataclass(slots=True, init=False)
class Start:
    """A job to start where the pass placed it.  Written once (``core.set_once``), not a frozen
    dataclass: one is made per start of every pass, and a frozen dataclass's ``__init__`` stays
    interpreted under mypyc (``JobSpec``'s reason)."""

    job_id: str
    placement: tuple[tuple[str, int], ...]  # (node, gpus)
    allocated: bool  # charged (False: runs as unallocated, preemptible at once)
    reason: str
    # a backfill on a reserved node that yields to reservations after its protection: a driver
    # must remember it and report it back (``RunningJob.yields_to_reservation``)
    yields: bool

    def __init__(
        self, job_id: str, placement: tuple[tuple[str, int], ...], allocated: bool, reason: str, yields: bool = False
    ) -> None:
        self.job_id = job_id
        self.placement = placement
        self.allocated = allocated
        self.reason = reason
        self.yields = yields

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def __hash__(self) -> int:
        return hash((self.job_id, self.placement, self.allocated, self.reason, self.yields))

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field (``JobSpec.__reduce__``: a switched run deep-copies
        the starts waiting out a launch latency)."""
        return (Start, (self.job_id, self.placement, self.allocated, self.reason, self.yields))


@dataclass(slots=True, init=False)
class Preemption:
    """A job to stop, and why.  Written once (``core.set_once``), as ``Start``."""

    job_id: str
    for_job: str | None  # the job that needed the GPUs (None for drains)
    rule: str  # "unallocated" | "reservation" | "within-team" | "reclaim" | "debug-slice" | "overdraft-yield" | "consolidate" | "free-packing" | "drain"
    lost_work: float  # seconds of progress lost (since the last checkpoint)
    reason: str

    def __init__(self, job_id: str, for_job: str | None, rule: str, lost_work: float, reason: str) -> None:
        self.job_id = job_id
        self.for_job = for_job
        self.rule = rule
        self.lost_work = lost_work
        self.reason = reason

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def __hash__(self) -> int:
        return hash((self.job_id, self.for_job, self.rule, self.lost_work, self.reason))

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field (``Start.__reduce__``)."""
        return (Preemption, (self.job_id, self.for_job, self.rule, self.lost_work, self.reason))


@dataclass(frozen=True, slots=True)
class Refusal:
    """A pending job the policy rejects at submission (``core.contract.refusal``): the
    simulator never queues it; a live cluster that accepted it is told to cancel it.  Made once
    per refused job, so a frozen dataclass still (with ``__reduce__``: compiled, a frozen
    dataclass does not unpickle by the default protocol, ``core.jobs.NodeEvent``)."""

    job_id: str
    reason: str

    def __reduce__(self) -> tuple[Any, ...]:
        return (Refusal, (self.job_id, self.reason))


@dataclass(slots=True, init=False)
class Reservation:
    """A gang's hold on nodes, reported.  Written once, as ``Start``: made by passes whose
    holds changed."""

    job_id: str
    nodes: tuple[str, ...]
    at: float  # the estimated time the reserved nodes are all free
    reason: str

    def __init__(self, job_id: str, nodes: tuple[str, ...], at: float, reason: str) -> None:
        self.job_id = job_id
        self.nodes = nodes
        self.at = at
        self.reason = reason

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def __hash__(self) -> int:
        return hash((self.job_id, self.nodes, self.at, self.reason))

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field (``Start.__reduce__``)."""
        return (Reservation, (self.job_id, self.nodes, self.at, self.reason))


@dataclass(slots=True, init=False)
class NodeReport:
    """A draining node's state, reported.  Written once, as ``Start``: every pass with an
    unhealthy node makes one per such node (``core.drain``)."""

    node: str
    state: str  # "draining" | "ready-for-repair"
    waiting_on: tuple[str, ...]  # jobs still protected on it
    needs_human: bool  # some job there stays protected longer than the policy threshold
    reason: str

    def __init__(self, node: str, state: str, waiting_on: tuple[str, ...], needs_human: bool, reason: str) -> None:
        self.node = node
        self.state = state
        self.waiting_on = waiting_on
        self.needs_human = needs_human
        self.reason = reason

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def __hash__(self) -> int:
        return hash((self.node, self.state, self.waiting_on, self.needs_human, self.reason))

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field (``Start.__reduce__``)."""
        return (NodeReport, (self.node, self.state, self.waiting_on, self.needs_human, self.reason))


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


@dataclass(slots=True, init=False)
class Decisions:
    """Everything one pass decides.  Written once (``core.set_once``), as ``Start``: most passes
    of a run with a gang waiting decide something (its reservation at least), and a frozen
    dataclass's interpreted ``__init__`` cost 14 thousand instructions a pass (stop 48's
    callgrind, docs/benchmarks.md).  ``dataclasses.replace`` still works (``decide()`` adds the
    order to a pass's decisions): every field is an ``__init__`` parameter of the same name."""

    starts: tuple[Start, ...]
    preemptions: tuple[Preemption, ...]
    reservations: tuple[Reservation, ...]
    nodes: tuple[NodeReport, ...]
    order: tuple[Ranked, ...]
    # the latest time a driver should run the next pass even if nothing happens (a protection
    # ends, an epoch boundary while work waits): Scheduler.wake_at; filled in by decide()
    wake_at: float | None
    refusals: tuple[Refusal, ...]
    # sessions told this pass that they will be stopped after their grace (core.session_grace)
    notices: tuple[Notice, ...]
    # knob keep_hold: the holds kept after this pass, for the next tick's Snapshot.kept_holds; filled in by decide()
    kept_holds: tuple[KeptHold, ...]

    def __init__(
        self,
        starts: tuple[Start, ...] = (),
        preemptions: tuple[Preemption, ...] = (),
        reservations: tuple[Reservation, ...] = (),
        nodes: tuple[NodeReport, ...] = (),
        order: tuple[Ranked, ...] = (),
        wake_at: float | None = None,
        refusals: tuple[Refusal, ...] = (),
        notices: tuple[Notice, ...] = (),
        kept_holds: tuple[KeptHold, ...] = (),
    ) -> None:
        self.starts = starts
        self.preemptions = preemptions
        self.reservations = reservations
        self.nodes = nodes
        self.order = order
        self.wake_at = wake_at
        self.refusals = refusals
        self.notices = notices
        self.kept_holds = kept_holds

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def _fields(self) -> tuple[Any, ...]:
        return (self.starts, self.preemptions, self.reservations, self.nodes, self.order, self.wake_at,
                self.refusals, self.notices, self.kept_holds)

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field (``Start.__reduce__``)."""
        return (Decisions, self._fields())
