"""A session's notice and grace before the reconciler stops it (issue 29; docs/design/interactive.md).

The core decides *whether* a running job makes room; it knows nothing of sessions.  What a
session is owed when it must go is the reconciler's to carry out, with Slurm's ``GraceTime``
semantics: when a job of the policy's interactive class (``compile.interactive``) past its
minimum runtime is chosen, it is first given notice (``notify``: Slurm sends SIGTERM to its
steps and batch shell; Kubernetes annotates its pods), and only a tick at or after the notice
plus ``grace`` requeues (or cancels) it -- on Kubernetes with the same termination grace.

A notice is pinned to the run it was given to (the run's start): a session requeued and started
again gets a fresh notice the next time.  The reconciler remembers each notice in its state dir
(``memory_file``), so a restart neither notifies twice nor cuts a grace short.  While a session
is in its grace the core may pick it again each tick; nothing more happens until the grace ends.
If the core stops choosing it (its preemptor started elsewhere, or ended), the session simply
runs on; a later choice of the same run finds the old notice and does not wait again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from allotment.backends.actions import ClusterAction
from allotment.backends.protocol import JobObs
from allotment.compile.interactive import InteractiveClass


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice given to one run of a job: its start key and when (Unix seconds)."""

    run: str
    at: float


def is_session(job: JobObs, cls: InteractiveClass) -> bool:
    """Is this observed job a session by the policy's one recognition rule?"""
    return cls.recognises(job.kind, partition=job.partition or None, gpus=job.gpus, time_limit_s=job.time_limit_s)


def grace_step(
    job: JobObs, run: str, rule: str, reason: str, cls: InteractiveClass,
    noticed: Mapping[str, Notice], now: float,
) -> ClusterAction | str | None:
    """What a session chosen to make room needs before it may be stopped: a ``notify`` action
    (no notice given to this run yet), a line for the plan's skipped list (in its grace), or
    None (not a session, no grace, or the grace has passed: stop it now)."""
    if cls.grace_s <= 0 or not is_session(job, cls):
        return None
    given = noticed.get(job.id)
    if given is None or given.run != run:
        return ClusterAction("notify", job.id, rule, f"{reason}; stopped after {cls.grace_s}s of grace",
                             expect=run, grace_s=cls.grace_s, restore_hook=cls.restore_hook)
    left = given.at + cls.grace_s - now
    if left > 0:
        return f"{job.id}: session in its grace, {left:.0f}s left ({reason})"
    return None
