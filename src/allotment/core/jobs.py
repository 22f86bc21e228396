"""What a job is, as the scheduling core sees it.

A ``JobSpec`` is what a user submitted (one line of a canonical trace).  Runtime state (started,
progress, node assignment) lives with the simulator or backend, never here, so one spec can be
replayed under several policies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from allotment.core.set_once import refuse_delete, refuse_second_write

JobKind = Literal["debug", "train", "interactive", "batch", "inference"]
JOB_KINDS: tuple[str, ...] = ("debug", "train", "interactive", "batch", "inference")


@dataclass(slots=True, init=False)
class JobSpec:
    """A submitted job.  Times are seconds from trace start.

    ``min_runtime`` is the declared minimum runtime before the policy cap is applied: 0 means
    unallocated (free, never charged, preemptible at once); ``None`` means "not declared", which
    the policy's ``default_min_runtime_s`` fills.  ``gpus_per_node`` None means "pack on one node
    when it fits, else whole nodes".

    Immutable like a frozen dataclass (assigning or deleting a field raises
    ``FrozenInstanceError``; equal when every field is equal; hashable; ``dataclasses.replace``
    works), but with its own ``__init__``: the module is compiled (``_compiled.HOT``), and mypyc
    compiles a written ``__init__`` into direct stores, where a frozen dataclass's generated one
    stays interpreted and sets each field through ``object.__setattr__`` (2.3 us a job,
    compiled or not, against 0.07 us from compiled code; a streamed trace builds every job
    twice: its check, then its replay).  Compiled, the fields are also read natively by the
    compiled core.  ``__setattr__`` refuses a second write: compiled, ``__init__`` never calls
    it; interpreted (``ALLOTMENT_PURE=1``) it lets each field be set once, by ``__init__``.
    """

    id: str
    submit: float
    account: str
    gpus: int
    work: float  # seconds of runtime if never interrupted
    user: str
    gpus_per_node: int | None
    min_runtime: float | None
    resumable: bool
    checkpoint_interval: float | None  # None: resumable jobs checkpoint continuously
    priority: int  # declared within-team priority (higher first)
    kind: str
    deadline: float | None
    depends_on: tuple[str, ...]
    gpu_type: str | None
    # what a live scheduler says of the job beyond the trace (a reconciler fills them from the
    # backend; a simulated trace carries neither): its partition or queue, and its time limit in
    # seconds.  Read only by the interactive class's recognition (``core.session_grace``).
    partition: str | None
    time_limit: float | None

    def __init__(
        self,
        id: str,
        submit: float,
        account: str,
        gpus: int,
        work: float,
        user: str = "",
        gpus_per_node: int | None = None,
        min_runtime: float | None = None,
        resumable: bool = True,
        checkpoint_interval: float | None = None,
        priority: int = 0,
        kind: str = "batch",
        deadline: float | None = None,
        depends_on: tuple[str, ...] = (),
        gpu_type: str | None = None,
        partition: str | None = None,
        time_limit: float | None = None,
    ) -> None:
        self.id = id
        self.submit = submit
        self.account = account
        self.gpus = gpus
        self.work = work
        self.user = user
        self.gpus_per_node = gpus_per_node
        self.min_runtime = min_runtime
        self.resumable = resumable
        self.checkpoint_interval = checkpoint_interval
        self.priority = priority
        self.kind = kind
        self.deadline = deadline
        self.depends_on = depends_on
        self.gpu_type = gpu_type
        self.partition = partition
        self.time_limit = time_limit

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.id, self.submit, self.account, self.gpus, self.work, self.user, self.gpus_per_node,
            self.min_runtime, self.resumable, self.checkpoint_interval, self.priority, self.kind,
            self.deadline, self.depends_on, self.gpu_type, self.partition, self.time_limit,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash(self._fields())  # a frozen dataclass's: every field, in order

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and deep-copied as a call of the constructor with every field (the default
        protocol sets each field on an empty instance, which a compiled ``__setattr__`` refuses;
        plan's worker pool pickles the workloads it hands out: ``tests/core/test_job_records.py``)."""
        return (JobSpec, self._fields())


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """A node health change at ``time`` (seconds from trace start)."""

    time: float
    node: str
    state: Literal["unhealthy", "healthy"]

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field: compiled, a frozen dataclass does not unpickle by the
        default protocol, which sets each field on an empty instance (``JobSpec.__reduce__``)."""
        return (NodeEvent, (self.time, self.node, self.state))


def kept_work(ran: float, checkpoint_interval: float | None) -> float:
    """What a resumable job keeps of a run of ``ran`` seconds when it is stopped: all of it when
    it checkpoints continuously (``None``), else its last whole checkpoint interval.  The one
    rule for the core's eviction (``core.cluster``) and the simulator's launch correction
    (``sim.runner``: a backend's job does no work before its launch)."""
    ci = checkpoint_interval
    if ci is None or ci <= 0:
        return ran
    return math.floor(ran / ci) * ci
