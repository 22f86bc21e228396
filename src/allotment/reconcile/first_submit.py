"""A job's first submission, which Slurm forgets at a requeue.

Slurm sets a requeued job's ``submit_time`` to the requeue (seen on the test cluster:
``squeue --json`` of a job requeued at T shows ``submit_time`` T).  The core ages a requeued
job from when it first became schedulable, as the simulator does (``core.cluster``: a
preempted job goes back with its old ``eligible``), so the reconciler remembers each job's
submission from before its first requeue and hands it to ``reconcile.active.snapshot``.

A job drops out of ``squeue``'s running and pending jobs for a moment while its requeue
completes (COMPLETING), so an entry is kept ``FORGET_S`` after the job was last seen, not
dropped at the first tick it is missing.  A job first seen already requeued (the reconciler
restarted since) ages from its requeue: the memory is not persisted.
"""

from __future__ import annotations

from collections.abc import Mapping

from allotment.backends.protocol import Observation
from allotment.reconcile.job_memory import FORGET_S  # the same "out of sight this long: gone"

__all__ = ["FORGET_S", "FirstSubmissions"]


class FirstSubmissions:
    def __init__(self) -> None:
        self._first: dict[str, tuple[float, float]] = {}  # job -> (first submit, last seen)

    def update(self, obs: Observation) -> Mapping[str, float]:
        """Take in one observation; the first submission of every job known."""
        self._first = {j: v for j, v in self._first.items() if obs.at - v[1] < FORGET_S}
        for j in obs.jobs:
            known = self._first.get(j.id)
            if known is not None or not j.restarts:
                self._first[j.id] = (j.submit if known is None else known[0], obs.at)
        return {j: t for j, (t, _) in self._first.items()}
