"""When, inside each tick, the reconciler really reads the cluster: the replay's pass time.

The simulator's core decides at its pass on the state at that instant.  The reconciler's tick
starts ``TICK_LAG_S`` after a multiple of the interval, fetches the source and reads the policy
(three ``sacctmgr`` calls, about 0.4 s) and only then reads the jobs (``squeue``): a job that
ended, or was submitted, before that read is in its decision.  So the replay's real pass time
is that read, ``lag`` seconds after the multiple, and the simulation is compared on the same
footing: the workload runs ``lag`` earlier (``simlog.simulated_events``), and the profile's
launch delay counts from the read (``sim/latency.py``, docs/fidelity.md).

Measured, not assumed: ``TimedObserve`` wraps the backend and notes the wall time of each
``observe``; the replay keeps the median offset from the grid.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from allotment.backends.actions import Action, ActionResult
from allotment.backends.policy import PolicyState
from allotment.backends.protocol import Backend, FinishedRun, Observation


class TimedObserve:
    """A backend that notes when each ``observe`` began; everything else passes through."""

    def __init__(self, inner: Backend, clock: Callable[[], float]) -> None:
        self.inner, self.clock = inner, clock
        self.name = inner.name
        self.times: list[float] = []

    def observe(self) -> Observation:
        self.times.append(self.clock())
        return self.inner.observe()

    def observe_policy(self) -> PolicyState:
        return self.inner.observe_policy()

    def history(self, since: float) -> tuple[FinishedRun, ...]:
        return self.inner.history(since)

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        return self.inner.apply(actions, dry_run=dry_run)

    def __getattr__(self, attr: str) -> Any:  # the Slurm backend's runner, for the replay
        return getattr(self.inner, attr)


def observe_lag(times: Sequence[float], t0: float, step: float) -> float:
    """The median offset of the reads from the grid ``t0 + k * step`` (0 when none)."""
    offsets = [(t - t0) % step for t in times if t >= t0]
    return round(statistics.median(offsets), 3) if offsets else 0.0
