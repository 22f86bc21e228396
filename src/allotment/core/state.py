"""Mutable records the scheduler keeps between passes (the simulator keeps one scheduler for a
whole run; ``decide`` builds a fresh one from a snapshot).  Not data for other layers: those get
``snapshot`` and ``decisions`` values."""

from __future__ import annotations

from collections.abc import Mapping

from allotment.compile.model import PriorityWeights
from allotment.core.dependant_list import DependantList
from allotment.core.ids import NO_ACCOUNT, NO_USER, AccountId, UserGpus, UserId
from allotment.core.jobs import JobSpec


class StaticScore:
    """The part of a pending job's within-team score that only the epoch changes
    (``core.priority.Scorer``): ``head`` = declared + deadline + age, weighted, summed in that
    order, and the boost; valid for epoch ``t`` and the weights object ``weights``.  Read-only
    by convention: a plain slotted class, since one is made per job and epoch and under mypyc a
    frozen dataclass's ``__init__`` runs as interpreted Python."""

    __slots__ = ("boost", "head", "t", "weights")

    def __init__(self, t: float, weights: PriorityWeights, head: float, boost: float) -> None:
        self.t, self.weights, self.head, self.boost = t, weights, head, boost


class InheritedParts:
    """The part of each waiting dependant's score that only the epoch changes
    (``core.priority.Scorer._inherited``): per dependant (its user's id in ``users``, declared +
    deadline, boost), in dependant order; dependants of one user with the same boost are kept as the one
    with the highest declared + deadline (the rest of the sum is the same for them, and float
    addition is monotone, so that one's sum is their maximum).  Valid for epoch ``t``,
    ``weights`` and the user table ``users`` its ids index.  A plain slotted class, like
    ``StaticScore``; read-only by convention, but for ``boosts``, which the scorer may replace by
    an equal mapping (so that the epoch's next passes find it by identity)."""

    __slots__ = ("boosts", "got", "parts", "t", "timeless", "users", "weights")

    def __init__(self, t: float, weights: PriorityWeights, parts: tuple[tuple[UserId, float, float], ...],
                 timeless: bool, got: DependantList, boosts: Mapping[str, float], users: UserGpus) -> None:
        self.t, self.weights, self.parts, self.users = t, weights, parts, users
        # also valid at any other epoch when no dependant has a deadline (``timeless``), for
        # the same dependants ``got`` and equal active boosts: nothing else of it reads the time
        self.timeless, self.got, self.boosts = timeless, got, boosts


class Run:
    """A running job.  ``gpus``, ``account``, ``resumable`` and ``ckpt`` copy the spec's fields:
    the hot loops read them millions of times, and on this (compiled) class that is cheap."""

    __slots__ = (
        "account",
        "aid",
        "allocated",
        "ckpt",
        "declared",
        "done_before",
        "eligible",
        "est_end",
        "evicted_by",
        "gpus",
        "jid",
        "lent",
        "placement",
        "protected_until",
        "resumable",
        "spec",
        "start",
        "uid",
        "yields",
    )

    def __init__(
        self,
        spec: JobSpec,
        start: float,
        placement: tuple[tuple[int, int], ...],
        allocated: bool,
        protected_until: float,
        done_before: float,
        declared: int,
        evicted_by: str | None,
    ) -> None:
        self.spec = spec
        self.start = start
        self.placement = placement
        self.allocated = allocated
        self.protected_until = protected_until
        self.done_before = done_before
        self.declared = declared
        self.evicted_by = evicted_by
        self.est_end = start + max(0.0, spec.work - done_before)
        self.eligible = spec.submit
        self.gpus: int = spec.gpus
        self.jid: str = spec.id
        self.account: str = spec.account
        self.resumable: bool = spec.resumable
        self.ckpt: float | None = spec.checkpoint_interval
        # started on a reserved node it would overrun, admitted because its protection ends
        # before the reservation starts: it yields to a reservation from then on (core.reservation)
        self.yields = False
        # holds lent session-pool GPUs (``core.session_pool``, rule 2): set where the run is
        # recorded (``ClusterState.add_running``, ``Starting.launch``) from ``SessionPool.lent``,
        # which reads only the immutable spec and the placement, so the pool's bound and its
        # reclaim read it here instead of recognising the job again (an interpreted call each)
        self.lent = False
        # its (account, user)'s and its account's ids, given when it starts (``Accounting.started``)
        self.uid: UserId = NO_USER
        self.aid: AccountId = NO_ACCOUNT

    def frees_at(self) -> float:
        """When a reservation may have this job's GPUs: its protection's end if it yields,
        else its expected end."""
        return self.protected_until if self.yields else self.est_end


class Pend:
    """A pending job.  ``gpus``, ``account``, ``user``, ``jid``, ``work``, ``gpu_type``,
    ``resumable`` and ``deadline`` copy the spec's fields
    (``JobSpec`` is an interpreted class: reading it from compiled code is a generic attribute
    lookup); ``uid`` and ``aid`` (the ids of its (account, user) in ``Accounting.user_gpus`` and
    of its account in ``Accounting.accounts``, ``core.ids``), ``n``,
    ``per`` (its shape on the pool) and ``mr`` (its clamped minimum runtime) are filled in by
    the scheduler when it queues the job."""

    __slots__ = (
        "account",
        "aid",
        "deadline",
        "declared",
        "done_work",
        "eligible",
        "evicted_by",
        "gpu_type",
        "gpus",
        "inherit",
        "jid",
        "key",
        "mr",
        "n",
        "per",
        "queue",
        "queued_since",
        "resumable",
        "session",
        "shape",
        "spec",
        "static",
        "uid",
        "user",
        "work",
    )

    def __init__(
        self,
        spec: JobSpec,
        eligible: float,
        queued_since: float,
        done_work: float,
        declared: int,
        evicted_by: str | None,
        queue: str,
    ) -> None:
        self.spec = spec
        self.eligible = eligible
        self.queued_since = queued_since
        self.done_work = done_work
        self.declared = declared
        self.evicted_by = evicted_by
        self.queue = queue
        self.key: tuple[float, float, str] = (-float(declared), eligible, spec.id)  # set by the mode
        self.gpus: int = spec.gpus
        self.account: str = spec.account
        self.user: str = spec.user
        self.uid: UserId = NO_USER
        self.aid: AccountId = NO_ACCOUNT
        self.jid: str = spec.id
        self.work: float = spec.work
        self.gpu_type: str | None = spec.gpu_type
        self.resumable: bool = spec.resumable
        self.deadline: float | None = spec.deadline
        self.n = 0
        self.per = 0
        self.mr = 0.0
        self.shape = -1  # the id of (gpus, n, per, GPU type) in ClusterState.shape_id (-1: none)
        # a session by the policy's class (``SessionPool.session``, of the immutable spec), read
        # once when queued: every visit asks it of each candidate
        self.session = False
        self.static: StaticScore | None = None  # the score memo (core.priority.Scorer)
        self.inherit: InheritedParts | None = None  # ... and its dependants'
