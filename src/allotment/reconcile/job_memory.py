"""What the reconciler remembers of a job that the cluster does not keep for it, and how long.

The core reads a few facts about a job that a real scheduler does not record: which job a
requeued job was evicted for (the anti-thrash rule, ``core.preemption.victims``) and when it
was first submitted (``reconcile.first_submit``; Slurm resets ``submit_time`` at a requeue).
The simulator keeps them on the job itself; the reconciler keeps them here, per job id.

A job drops out of ``squeue``'s running and pending lists for a moment while its requeue
completes (COMPLETING), exactly when these facts matter most, so an entry is kept ``FORGET_S``
after the job was last seen, not dropped at the first tick it is missing.  The entries, with
when each job was last seen, are saved in the state dir (``reconcile.memory_file``), so a
restarted reconciler decides as one that never stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

from allotment.backends.protocol import Observation

FORGET_S = 3600.0  # out of sight this long: gone

V = TypeVar("V")


class JobMemory(Generic[V]):
    """One value per job id, forgotten ``FORGET_S`` after the job was last observed."""

    def __init__(self, entries: Mapping[str, tuple[V, float]] | None = None) -> None:
        self._by: dict[str, tuple[V, float]] = dict(entries or {})  # job -> (value, last seen)

    def observe(self, obs: Observation) -> None:
        """Take in one observation: every job in it was seen now; long-gone ones are forgotten."""
        ids = {j.id for j in obs.jobs}
        self._by = {
            j: (v, obs.at if j in ids else seen)
            for j, (v, seen) in self._by.items()
            if j in ids or obs.at - seen < FORGET_S
        }

    def remember(self, job: str, value: V, at: float) -> None:
        self._by[job] = (value, at)

    def values(self) -> Mapping[str, V]:
        return {j: v for j, (v, _) in self._by.items()}

    def entries(self) -> Mapping[str, tuple[V, float]]:
        """Every entry with when its job was last seen: what ``memory_file`` saves."""
        return dict(self._by)
