"""The state the scheduling core decides on: plain frozen values a reconciler can build from any
cluster (Slurm, Kubernetes, the simulator).

A ``Snapshot`` holds:

* ``nodes``: each ``NodeState(name, gpus, healthy, gpu_type)``; unhealthy nodes take no new work;
* ``running``: each ``RunningJob(spec, start, placement, allocated, protected_until, ...)`` where
  ``placement`` is ``((node, gpus), ...)``, ``allocated`` says whether the job is charged to its
  account, and ``protected_until`` is when its minimum runtime is over (``start`` for unallocated
  work);
* ``pending``: each ``PendingJob(spec, eligible, queued_since, ...)``: jobs whose dependencies are
  met, ``eligible`` being when they became schedulable and ``queued_since`` when they last entered
  the queue (a requeued job keeps its original ``eligible`` so it does not lose its age);
* ``waiting``: the specs of known jobs that may not start yet, as they wait for other jobs
  (Slurm ``--dependency``): never queued, only read by the dependency pass, so that a waiting
  job's urgency reaches the work it waits for as in the simulator, whose dependants map holds
  every job of the trace (``core.priority.dependants``, ``propagate``);
* ``kept_holds``: with the knob ``keep_hold``, the reservations kept by their holders since an
  earlier pass, each with its first planned start (``KeptHold``): the one fact of a pass that a
  later pass reads (the simulator's scheduler keeps it; ``decide`` takes it from here); with the
  knob ``hand_over`` instead, the last pass's holders (``core.hand_over``);
* ``usage``: charged reference GPU-hours of each leaf account over the lookback window ending now
  (``core.usage.UsageLedger`` computes it from start/stop records; a reconciler may read it from
  ``sshare`` instead).

Times are seconds on any fixed axis (the simulator uses seconds from trace start); the core only
compares and subtracts them.  See ``core.decide`` for the function that consumes a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from allotment.core.jobs import JobSpec


@dataclass(frozen=True, slots=True)
class NodeState:
    name: str
    gpus: int
    healthy: bool = True
    gpu_type: str | None = None


@dataclass(frozen=True, slots=True)
class RunningJob:
    spec: JobSpec
    start: float
    placement: tuple[tuple[str, int], ...]  # (node, gpus) pairs, node order stable
    allocated: bool  # charged to its account; False = unallocated (free, preemptible at once)
    protected_until: float  # end of the minimum runtime; preemptible from then on
    done_before: float = 0.0  # seconds of work already done before this start (resumed jobs)
    evicted_by: str | None = None  # the job that last evicted it, for the anti-thrash rule
    eligible: float | None = None  # when it first became schedulable (None: its submit time)
    yields_to_reservation: bool = False  # a backfill that yields to a reservation (core.reservation)
    noticed_at: float | None = None  # a session told it will be stopped (core.session_grace), this run


@dataclass(frozen=True, slots=True)
class PendingJob:
    spec: JobSpec
    eligible: float  # when it first became schedulable (age is counted from here)
    queued_since: float  # when it last entered the queue
    done_work: float = 0.0  # seconds of work kept from earlier runs (checkpoints)
    evicted_by: str | None = None


@dataclass(frozen=True, slots=True)
class KeptHold:
    """A reservation kept by its holder from one pass to the next (knob ``keep_hold``): the
    holder and its hold's first planned start (``anchor``), while it has held it without a
    break.  What a scheduler remembers between passes (``Scheduler.kept``), and what a
    reconciler would persist between ticks, as it does ``evicted_by`` (``Snapshot.kept_holds``;
    the rule: ``core.reservation.keeps``).  Anchored at the *first* plan, so the debug jobs a kept hold lets through (``Hold.yield_by``)
    delay its gang by at most the debug threshold once, however many arrive."""

    holder: str
    anchor: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    nodes: tuple[NodeState, ...]
    running: tuple[RunningJob, ...] = ()
    pending: tuple[PendingJob, ...] = ()
    usage: Mapping[str, float] = field(default_factory=dict)  # leaf -> reference GPU-hours in window
    waiting: tuple[JobSpec, ...] = ()  # known jobs waiting for others: read by the dependency pass only
    kept_holds: tuple[KeptHold, ...] = ()  # reservations kept by their holders (knob keep_hold), by holder
