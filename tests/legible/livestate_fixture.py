"""A real reconciler state dir for the live views, written by the reconciler itself over a small
git repo (tests/reconcile/repo.py) and the simulated backend, the way tests/reconcile drive it:
a fixed clock (``T0``) that the backend and the reconciler share, so the scenario (times, jobs,
actions, usage) is the same on any day; only the repo's commit ids differ.  (``allot reconcile --backend sim`` runs its cluster on the wall
clock, so a test cannot pass an hour between its ticks.)

The cluster is the inventory's (n1-n4 x 8 GPUs); jobs are submitted after the first tick, an
hour passes, n4 is reported unhealthy, half an hour more passes, and a last tick finds nothing
to change (Ready).  ``sim.json`` is saved after every tick, as the CLI does."""

from __future__ import annotations

from pathlib import Path

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.conftest import T0, Clock
from tests.reconcile.repo import make_repo

JOBS = (("teama1", 8, ""), ("teama1", 8, ""), ("teamb", 8, ""), ("teama2", 8, "unallocated"),
        ("teama1", 16, ""), ("teamb", 8, ""), ("teama2", 8, ""))


def make_state_dir(tmp: Path) -> Path:
    repo, state = tmp / "budgets-repo", tmp / "state"
    make_repo(repo)
    health = tmp / "health.txt"
    health.write_text("", encoding="utf-8")
    clock = Clock(T0)
    sim = SimulatedBackend(now=T0)  # its nodes come from the inventory on the first tick
    rec = Reconciler(sim, GitSource(str(repo), "main", state), state,
                     Options(tiers_s=(7200,), health_file=str(health)), clock=clock,
                     source_label=str(repo))

    def tick(after_s: float) -> None:
        sim.advance(after_s)
        clock.t = sim.state.now
        result = rec.tick()
        assert result.error is None and result.skew is not None and result.skew.ok, result
        sim.save(state / "sim.json")

    try:
        tick(0)
        for account, gpus, qos in JOBS:
            sim.submit(account, gpus, qos=qos)
        health.write_text("n4 unhealthy GPU 3 fell off the bus\n", encoding="utf-8")
        tick(3600)
        tick(1800)
        tick(10)
    finally:
        rec.close()
    return state
