"""The one interface every cluster backend implements (the reconciler knows nothing else).

A handful of calls, like httpx's one-method transport, kept small so a new backend is a weekend:

* ``observe()``: nodes (GPUs, use, drain state) and jobs (running and pending, with user,
  account, GPUs, start time, declared minimum runtime and resumability), and the backend's own
  clock when it answered (``backend_now``): job start times are on that clock, so the
  reconciler takes "now" for contract and ledger decisions from it, never from its own.
* ``history(since)``: the runs that ended at or after ``since`` (Slurm: ``sacct``), so usage
  of jobs that ended while the reconciler was down still reaches the ledger.
* ``config_warnings()``: what the backend's own config lacks for active mode, one sentence each
  (Slurm: ``slurm.conf``, ``backends/slurm/config_check.py``); None where nothing is checked.
* ``observe_policy()``: the accounts, users and QOS the backend holds (``backends.policy``).
* ``apply(actions, dry_run)``: carry out policy actions (sync the compiled tree and knobs onto
  the backend's own primitives) and cluster actions (requeue, cancel, set order, drain, resume),
  in the order given, each checked against the current state first so that a retry is a no-op.
  ``dry_run`` validates each action and reports ``dry_run`` without changing anything.

Starting jobs is left to the backend's own scheduler (Slurm starts what it can); the reconciler
steers it by order, preemption and draining.  Errors are ``BackendError``; a backend never
raises anything else on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from allotment.backends.actions import Action, ActionResult
from allotment.backends.policy import PolicyState

JobState = Literal["running", "pending"]


@dataclass(frozen=True, slots=True)
class NodeObs:
    """A node as the backend reports it.  ``drain`` is True when new work is kept off it
    (draining or drained); ``down`` when the backend cannot use it at all."""

    name: str
    gpus: int
    gpus_used: int
    drain: bool = False
    down: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class JobObs:
    """A job as the backend reports it.  Times are Unix seconds.

    ``min_runtime_s`` is what the job declared through its QOS tier: 0 = unallocated,
    None = no tier (the policy default applies).  ``resumable`` False means a requeue loses work.
    ``gpus`` is the whole job's count (all nodes); ``gpus_per_node`` its per-node shape when it
    asked for one (or spans several nodes evenly); ``node_gpus`` a running job's GPUs on each of
    ``nodes``, when the backend reports them.  ``time_limit_s`` (None: unlimited or unknown)
    bounds how long the job may run: the core's work estimate.  ``restarts`` counts requeues;
    ``reason`` is why a pending job waits in the backend's words (Slurm: ``Dependency``,
    ``BeginTime``...).  ``priority`` is the backend's own (Slurm's computed value, which the
    reconciler sets); ``declared_priority`` and ``deadline`` are what the user declared, the
    inputs of the within-team order, with ``depends_on``, the jobs it still waits for
    (docs/operators-guide.md has the Slurm mapping, docs/kubernetes.md the Kubernetes one).
    ``partition`` (Slurm partition, Kueue LocalQueue) and ``kind`` (the
    declared kind: Slurm ``--comment kind=...``, the ``allotment.io/kind`` label) are what the
    policy's interactive class recognises a session by (``compile.interactive``).
    """

    id: str
    user: str
    account: str
    qos: str
    gpus: int
    state: JobState
    submit: float
    start: float | None = None
    min_runtime_s: int | None = None
    resumable: bool = True
    priority: int = 0
    nodes: tuple[str, ...] = ()
    eligible: float | None = None
    gpus_per_node: int | None = None
    node_gpus: tuple[int, ...] = ()
    time_limit_s: float | None = None
    restarts: int = 0
    reason: str = ""
    partition: str = ""
    kind: str | None = None
    declared_priority: int = 0  # what the user declared (within-team order), not the backend's computed ``priority``
    deadline: float | None = None  # the user's deadline (Unix seconds), None: none
    depends_on: tuple[str, ...] = ()  # the jobs it still waits for (Slurm ``--dependency``), by id


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """One run of a job that has ended (completed, failed, cancelled, preempted or requeued):
    what the ledger charges, keyed like a live observation by (job id, start)."""

    id: str
    user: str
    account: str
    qos: str
    gpus: int
    start: float
    end: float
    min_runtime_s: int | None = None  # as in JobObs: 0 = unallocated (never charged)
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Observation:
    """``at`` is when the observation was taken; ``backend_now`` the backend's own clock at that
    moment when it reports one (None: the backend's clock is ``at``)."""

    at: float
    nodes: tuple[NodeObs, ...]
    jobs: tuple[JobObs, ...]  # sorted by id
    backend_now: float | None = None

    def running(self) -> tuple[JobObs, ...]:
        return tuple(j for j in self.jobs if j.state == "running")

    def pending(self) -> tuple[JobObs, ...]:
        return tuple(j for j in self.jobs if j.state == "pending")

    def job(self, job_id: str) -> JobObs | None:
        return next((j for j in self.jobs if j.id == job_id), None)

    def node(self, name: str) -> NodeObs | None:
        return next((n for n in self.nodes if n.name == name), None)


class Backend(Protocol):
    name: str

    def observe(self) -> Observation: ...

    def observe_policy(self) -> PolicyState: ...

    def history(self, since: float) -> tuple[FinishedRun, ...]: ...

    def config_warnings(self) -> tuple[str, ...] | None: ...

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]: ...
