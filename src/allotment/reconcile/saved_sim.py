"""The simulated cluster as ``allot reconcile --backend sim`` keeps it: in ``STATE/sim.json``,
saved after every change, inside the caller's fence.

Why after every change and not once per tick: the sim's clock moves when it is observed (it
follows the wall clock), and runs end then.  Saved only at the end of a tick, a ``kill -9``
between the ledger's charge and that save would let the next reconciler (a restart, or a
standby taking over) load a cluster whose clock is behind the status's ``last_backend_time``:
the runs that end in between would then be outside ``history(since)`` and never charged.
Saved at the observation, the file's clock is never behind what was charged from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from allotment.backends.actions import Action, ActionResult
from allotment.backends.policy import PolicyState
from allotment.backends.protocol import FinishedRun, Observation
from allotment.backends.simulated import SimulatedBackend
from allotment.compile.model import Cluster
from allotment.reconcile.leadership import Fence, no_fence

SIM_FILE = "sim.json"


class SavedSim:
    """A ``Backend`` over a ``SimulatedBackend`` that saves it to ``path`` whenever it changes:
    at each observation (its clock moved) fenced here, and after each applied batch (the
    reconciler applies inside its own fence, so the save is inside it too)."""

    name = "sim"

    def __init__(self, sim: SimulatedBackend, path: Path, fence: Fence = no_fence) -> None:
        self.sim, self.path, self.fence = sim, path, fence

    def adopt_inventory(self, cluster: Cluster) -> None:
        self.sim.adopt_inventory(cluster)

    def observe(self) -> Observation:
        obs = self.sim.observe()
        with self.fence():
            self.sim.save(self.path)
        return obs

    def observe_policy(self) -> PolicyState:
        return self.sim.observe_policy()

    def history(self, since: float) -> tuple[FinishedRun, ...]:
        return self.sim.history(since)

    def config_warnings(self) -> tuple[str, ...] | None:
        return self.sim.config_warnings()

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        done = self.sim.apply(actions, dry_run=dry_run)
        if not dry_run:
            self.sim.save(self.path)
        return done

    def save(self) -> None:
        with self.fence():
            self.sim.save(self.path)
