"""A real reconciler state dir for the live views: the reconciler's own CLI with the simulated
backend over a small git repo (tests/reconcile/repo.py), jobs submitted between ticks, an hour
passed, one node reported unhealthy."""

from __future__ import annotations

from pathlib import Path

from allotment.backends.simulated import SimulatedBackend
from allotment.cli.main import main
from tests.reconcile.repo import make_repo


def make_state_dir(tmp: Path) -> Path:
    repo, state = tmp / "budgets-repo", tmp / "state"
    make_repo(repo)
    health = tmp / "health.txt"
    health.write_text("", encoding="utf-8")
    argv = ["reconcile", "--backend", "sim", "--source", str(repo), "--state", str(state), "--once",
            "--health-file", str(health), "--tiers", "2h"]
    assert main(argv) == 0
    sim = SimulatedBackend.load(state / "sim.json")
    for account, gpus, qos in (("teama1", 8, ""), ("teama1", 8, ""), ("teamb", 8, ""),
                               ("teama2", 8, "unallocated"), ("teama1", 16, ""), ("teamb", 8, ""),
                               ("teama2", 8, "")):
        sim.submit(account, gpus, qos=qos)
    sim.advance(3600)
    sim.save(state / "sim.json")
    health.write_text("n4 unhealthy GPU 3 fell off the bus\n", encoding="utf-8")
    assert main(argv) == 0
    sim = SimulatedBackend.load(state / "sim.json")
    sim.advance(1800)
    sim.save(state / "sim.json")
    assert main(argv) == 0
    return state
