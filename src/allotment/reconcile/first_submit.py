"""A job's first submission, which Slurm forgets at a requeue.

Slurm sets a requeued job's ``submit_time`` to the requeue (seen on the test cluster:
``squeue --json`` of a job requeued at T shows ``submit_time`` T).  The core ages a requeued
job from when it first became schedulable, as the simulator does (``core.cluster``: a
preempted job goes back with its old ``eligible``), so the reconciler remembers each job's
submission from before its first requeue and hands it to ``reconcile.active.snapshot``.

A job out of sight while its requeue completes (COMPLETING) keeps its entry for ``FORGET_S``
(``reconcile.job_memory``), and the memory is saved in the state dir, so a restart does not
lose it.  A job first seen already requeued (the reconciler was down when it was requeued, or
its state dir is new) ages from its requeue: the only submission there is to know.
"""

from __future__ import annotations

from collections.abc import Mapping

from allotment.backends.protocol import Observation
from allotment.reconcile.job_memory import FORGET_S, JobMemory

__all__ = ["FORGET_S", "FirstSubmissions"]


class FirstSubmissions:
    def __init__(self, memory: JobMemory[float] | None = None) -> None:
        self.memory: JobMemory[float] = memory or JobMemory()  # job -> first submission

    def update(self, obs: Observation) -> Mapping[str, float]:
        """Take in one observation; the first submission of every job known."""
        self.memory.observe(obs)
        known = self.memory.values()
        for j in obs.jobs:
            if j.id not in known and not j.restarts:
                self.memory.remember(j.id, j.submit, obs.at)
        return self.memory.values()
