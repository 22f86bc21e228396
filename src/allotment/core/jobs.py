"""What a job is, as the scheduling core sees it.

A ``JobSpec`` is what a user submitted (one line of a canonical trace).  Runtime state (started,
progress, node assignment) lives with the simulator or backend, never here, so one spec can be
replayed under several policies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

JobKind = Literal["debug", "train", "interactive", "batch", "inference"]
JOB_KINDS: tuple[str, ...] = ("debug", "train", "interactive", "batch", "inference")


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A submitted job.  Times are seconds from trace start.

    ``min_runtime`` is the declared minimum runtime before the policy cap is applied: 0 means
    unallocated (free, never charged, preemptible at once); ``None`` means "not declared", which
    the policy's ``default_min_runtime_s`` fills.  ``gpus_per_node`` None means "pack on one node
    when it fits, else whole nodes".
    """

    id: str
    submit: float
    account: str
    gpus: int
    work: float  # seconds of runtime if never interrupted
    user: str = ""
    gpus_per_node: int | None = None
    min_runtime: float | None = None
    resumable: bool = True
    checkpoint_interval: float | None = None  # None: resumable jobs checkpoint continuously
    priority: int = 0  # declared within-team priority (higher first)
    kind: str = "batch"
    deadline: float | None = None
    depends_on: tuple[str, ...] = ()
    gpu_type: str | None = None
    # what a live scheduler says of the job beyond the trace (a reconciler fills them from the
    # backend; a simulated trace carries neither): its partition or queue, and its time limit in
    # seconds.  Read only by the interactive class's recognition (``core.session_grace``).
    partition: str | None = None
    time_limit: float | None = None


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """A node health change at ``time`` (seconds from trace start)."""

    time: float
    node: str
    state: Literal["unhealthy", "healthy"]


def kept_work(ran: float, checkpoint_interval: float | None) -> float:
    """What a resumable job keeps of a run of ``ran`` seconds when it is stopped: all of it when
    it checkpoints continuously (``None``), else its last whole checkpoint interval.  The one
    rule for the core's eviction (``core.cluster``) and the simulator's launch correction
    (``sim.runner``: a backend's job does no work before its launch)."""
    ci = checkpoint_interval
    if ci is None or ci <= 0:
        return ran
    return math.floor(ran / ci) * ci
