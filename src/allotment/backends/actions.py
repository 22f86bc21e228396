"""Actions a backend applies, their documented total order, and typed results.

Policy actions change accounts, users and QOS; cluster actions change jobs and nodes.  Every
action carries the ``rule`` that produced it and a ``reason`` a person can read (the audit log
writes both).  ``key`` names the action for idempotency: applying the same key twice is a no-op
because every backend checks the current state before it acts.

Total order (``ORDER``), as in gitops-engine's sync waves: QOS before the accounts that use them,
accounts parent before child (pre-order), users after their accounts, modifications after
additions, prunes last and in reverse (users, then accounts child before parent).  Cluster
actions: resume, then drain, then requeue, then priorities (a requeue frees GPUs the new order
is meant to use), then notices (``notify``: a session past its minimum runtime is told it will be
requeued after its grace, docs/design/interactive.md; it frees nothing this tick).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PolicyKind = Literal[
    "add_qos",
    "modify_qos",
    "add_account",
    "modify_account",
    "add_user",
    "modify_user",
    "delete_user",
    "delete_account",
    "delete_qos",
]
ClusterKind = Literal["resume", "drain", "requeue", "cancel", "set_priority", "notify"]
# ``deferred``: not applied this tick by the reconciler's choice (reconcile.stale_read), never a
# backend's answer
ResultCode = Literal["applied", "unchanged", "failed", "pruned", "prune_skipped", "dry_run", "deferred"]

DRAIN_PREFIX = "allotment:"  # every drain reason we set starts so; only such drains are resumed

ORDER: dict[str, int] = {
    "add_qos": 0,
    "modify_qos": 1,
    "add_account": 2,
    "modify_account": 3,
    "add_user": 4,
    "modify_user": 5,
    "delete_user": 6,
    "delete_account": 7,
    "delete_qos": 8,
    "resume": 10,
    "drain": 11,
    "requeue": 12,
    "cancel": 13,
    "set_priority": 14,
    "notify": 15,
}


@dataclass(frozen=True, slots=True)
class PolicyAction:
    """Create, change or delete one account, user or QOS.

    ``fields`` holds the values to set as sorted (name, value) pairs; ``seq`` is the position
    within the same kind (pre-order for accounts) so sorting by ``sort_key`` is total.
    """

    kind: PolicyKind
    target: str
    fields: tuple[tuple[str, str], ...]
    rule: str
    reason: str
    seq: int = 0

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.target}"

    def field(self, name: str) -> str | None:
        return next((v for k, v in self.fields if k == name), None)

    def sort_key(self) -> tuple[int, int, str]:
        return (ORDER[self.kind], self.seq, self.target)


@dataclass(frozen=True, slots=True)
class ClusterAction:
    """Act on one job or node.  ``expect`` pins the state the action was planned against (for
    a requeue: the job's current start time) so a retry after success is a no-op.

    For ``set_priority``, three optional effects that keep the backend from acting on its own
    (a backend that can do none of them ignores them):

    * ``nodes``: the core's placement of a job it starts now; a backend that can pin where a
      pending job runs does (Slurm: ``ReqNodeList``), so the job lands where the core planned
      it, not where the backend's own node selection would put it; ``()`` clears a pin;
    * ``release``: the core starts the job now: end the hold that keeps the backend from
      starting it on its own (Slurm: the begin time ``job_submit.lua`` gives new jobs);
    * ``hold_eligible``: the core does not start it now although the backend could (it was
      released before and is pending again, after a requeue or a start Slurm did not carry
      out): hold it, keeping its eligibility from this time (Unix seconds: a requeue's delay).
    """

    kind: ClusterKind
    target: str  # job id or node name
    rule: str
    reason: str
    value: int = 0  # priority for set_priority
    expect: str = ""
    nodes: tuple[str, ...] | None = None
    release: bool = False
    hold_eligible: float | None = None
    grace_s: int = 0  # notify: the seconds of notice a session gets before it is stopped
    restore_hook: str | None = None  # notify: the command the requeued session runs first

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.target}:{self.expect}"

    def sort_key(self) -> tuple[int, str, str]:
        return (ORDER[self.kind], _id_key(self.target), self.expect)


Action = PolicyAction | ClusterAction


@dataclass(frozen=True, slots=True)
class ActionResult:
    action: Action
    code: ResultCode
    message: str = ""


def start_key(start: float) -> str:
    """How a requeue pins the run it was planned against (whole seconds of its start time)."""
    return f"{start:.0f}"


def _id_key(target: str) -> str:
    """Numeric ids sort numerically (job 9 before job 10), names alphabetically."""
    return target.rjust(20, "0") if target.isdigit() else target


def ordered(actions: list[Action] | tuple[Action, ...]) -> tuple[Action, ...]:
    """Sort into the documented total order (policy actions first, then cluster actions)."""

    def key(a: Action) -> tuple[int, int, str, str]:
        if isinstance(a, PolicyAction):
            o, s, t = a.sort_key()
            return (o, s, t, "")
        o, t, e = a.sort_key()
        return (o, 0, t, e)

    return tuple(sorted(actions, key=key))
