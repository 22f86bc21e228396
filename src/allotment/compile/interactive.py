"""The interactive job class of the policy (``interactive:`` in ``policies/scheduler.yaml``,
docs/design/interactive.md): how a session is recognised, and what it is owed when it must make
room -- a notice and a grace period, then a requeue that runs the restore hook the user names.

Recognition is one rule, ``InteractiveClass.recognises``, read by every place that needs it: the
job kinds of the metrics (``sim.job_kind``), the Slurm backend (which sessions get a signal and
``GraceTime`` before a requeue) and the Kubernetes backend (termination grace and annotation).
A job is a session when any one of the three tests holds, so a platform team can start from the
label users already write and add a partition later without changing what counted before:

1. its declared kind (the trace's ``kind``; a Slurm job's ``--comment kind=...``; the
   ``allotment.dev/job-kind`` pod label on Kubernetes) is one of ``kinds``;
2. it was submitted to one of ``partitions`` (a Slurm partition, a Kueue LocalQueue);
3. its shape fits: at most ``max_gpus`` GPUs *and* a time limit of at most ``max_time_limit_s``.
   Both bounds must be set, and the time limit known: a simulated trace carries none, so the
   shape test never matches in the simulator and a session there is recognised by 1.

The class may also reserve a *pool*: the last ``pool_nodes`` nodes of the cluster by name, or the
nodes ``pool_names`` lists (those of them the cluster has; the file check refused the others), where
sessions start first and other work only borrows idle GPUs it gives back at once
(``core.session_pool``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class InteractiveClass:
    """The resolved ``interactive`` knob for one cluster.  The default recognises the declared
    kind ``interactive`` only and gives no grace (what the scheduler did before the knob)."""

    kinds: tuple[str, ...] = ("interactive",)
    partitions: tuple[str, ...] = ()
    max_gpus: int | None = None
    max_time_limit_s: int | None = None
    grace_s: int = 0  # notice before a preempted session is stopped (Slurm GraceTime)
    restore_hook: str | None = None  # command the requeued session runs first (a name on PATH)
    pool_nodes: int = 0  # the last N nodes by name, reserved for sessions (core.session_pool)
    pool_names: tuple[str, ...] = ()  # or these nodes by name (sorted; set: pool_nodes is 0)

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field: compiled (``_compiled.HOT``), a frozen dataclass
        does not unpickle by the default protocol, and plan's workers pickle the policy."""
        return (InteractiveClass, (
            self.kinds, self.partitions, self.max_gpus, self.max_time_limit_s, self.grace_s,
            self.restore_hook, self.pool_nodes, self.pool_names,
        ))

    @property
    def reserves_pool(self) -> bool:
        """Does the class reserve any node (by count or by name)?"""
        return self.pool_nodes > 0 or bool(self.pool_names)

    def recognises(
        self, kind: str | None, *, partition: str | None = None, gpus: int | None = None,
        time_limit_s: float | None = None,
    ) -> bool:
        """Is a job with this declared kind, partition, GPU count and time limit a session?
        Unknown inputs (None) never match their test."""
        if kind is not None and kind in self.kinds:
            return True
        if partition is not None and partition in self.partitions:
            return True
        return (
            self.max_gpus is not None and self.max_time_limit_s is not None
            and gpus is not None and time_limit_s is not None
            and gpus <= self.max_gpus and time_limit_s <= self.max_time_limit_s
        )
