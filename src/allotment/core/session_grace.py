"""A session is told before it is stopped, and stopped only after its grace (issue 29;
docs/design/interactive.md).

Ai2's contract cost interactive users their uncheckpointed state: a session past its minimum
runtime was stopped the moment another job needed its GPUs.  The policy's interactive class
(``compile.interactive``) gives such a session a notice and ``grace_s`` seconds (Slurm's
``GraceTime`` semantics) to save what it cannot rebuild; a restore hook then brings it back.

This is a rule of the core, not of one driver, so that the simulator, the reconciler's
``decide()`` and ``allot explain`` all carry it out the same way:

* A victim search runs as always.  If the victims it found for a job include a session that has
  no notice for this run yet, or whose grace has not passed, **nothing is evicted and the job does
  not start in this pass**: each such session without a notice is given one now (``Notice``).
  Stopping the session's neighbours at once would leave their GPUs idle through the grace, for
  any later job to take.
* A later pass that picks the same session after its grace evicts it with the rest.  The core
  names that instant as a wake (``ClusterState.grace_end``), so a driver runs a pass then.
* A notice belongs to one run: a session that stops for any reason loses it, and a requeued
  session gets a fresh one.  If no pass picks the session again, it simply runs on.
* A session whose class names a restore hook keeps its work when it is stopped after its notice
  (``restored``): the hook snapshots on the notice and restores on the restart.

A drain of a failing node tells a session too and stops it after the grace: the node may still
run long enough for a snapshot, and a session stopped without notice loses what it had not saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allotment.compile.interactive import InteractiveClass
from allotment.core.jobs import JobSpec


@dataclass(frozen=True, slots=True)
class Notice:
    """A session told at ``at`` that it will be stopped after ``grace_s`` to make room for
    ``for_job`` (the victim rule and reason the search gave), or to drain its failing node
    (``for_job`` None, rule ``drain``)."""

    job_id: str
    for_job: str | None
    rule: str
    at: float
    grace_s: float
    reason: str

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field: compiled (``_compiled.HOT``), a frozen dataclass
        does not unpickle by the default protocol (``core.jobs.NodeEvent``)."""
        return (Notice, (self.job_id, self.for_job, self.rule, self.at, self.grace_s, self.reason))


def grace_of(spec: JobSpec, cls: InteractiveClass) -> float:
    """The grace a job gets before it is stopped: the class's when the job is a session by the
    class's one recognition rule, else 0 (stopped at once, as any other job)."""
    if cls.grace_s <= 0:
        return 0.0
    if not cls.recognises(spec.kind, partition=spec.partition, gpus=spec.gpus, time_limit_s=spec.time_limit):
        return 0.0
    return float(cls.grace_s)


def may_stop(noticed_at: float | None, grace_s: float, now: float) -> bool:
    """May a job with this grace, told at ``noticed_at`` (None: not yet), be stopped ``now``?"""
    return grace_s <= 0 or (noticed_at is not None and now >= noticed_at + grace_s)


def restored(cls: InteractiveClass, grace_s: float, noticed_at: float | None) -> bool:
    """Does a session stopped after its notice keep its work?  Only when its class names a
    restore hook (the hook snapshots on the notice and restores on the restart)."""
    return grace_s > 0 and noticed_at is not None and cls.restore_hook is not None
