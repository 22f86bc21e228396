"""When the newest state cannot be used, the contract keeps running on the last good revision:
unhealthy nodes are drained and usage is charged whether the source is gone, 51 bad commits sit
on top, or the backend refuses the newest valid commit (issue 14 item 9).  Real git repositories."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from allotment.backends.actions import ActionResult, PolicyAction
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.reconciler import Options, Reconciler
from tests.reconcile.conftest import T0
from tests.reconcile.repo import DEFAULT_SHARES, commit_all, write_repo


def _running_job_and_sick_node(
    rec: Reconciler, sim: SimulatedBackend, health: Path, step: float
) -> None:
    sim.submit("teamb", 8, qos="alloc-20s")
    health.write_text("n1 unhealthy  ECC errors\n")
    rec.clock.t = sim.state.now = T0 + step  # type: ignore[attr-defined]


def _drained(sim: SimulatedBackend) -> set[str]:
    return {n.name for n in sim.state.nodes.values() if n.drain}


def test_an_unreachable_source_keeps_the_contract_running_on_the_local_copy(
    make_reconciler: Any, sim: SimulatedBackend, config_repo: Path, tmp_path: Path
) -> None:
    health = tmp_path / "health.txt"
    rec = make_reconciler(Options(tiers_s=(20,), health_file=str(health)))
    good = rec.tick().revision
    shutil.move(config_repo, tmp_path / "gone")
    _running_job_and_sick_node(rec, sim, health, 600)
    result = rec.tick()
    assert result.revision == good and "cannot fetch" in (result.fetch_error or "")
    assert "n1" in _drained(sim)
    assert rec.ledger.rows() > 0
    stalled = rec.status.condition("Stalled")
    assert stalled is not None and stalled.status and stalled.reason == "SourceUnavailable"
    assert not rec.status.condition("Ready").status  # type: ignore[union-attr]
    assert rec.status.driving_revision == good


def test_51_invalid_commits_on_top_keep_the_last_good_revision_and_say_so(
    make_reconciler: Any, sim: SimulatedBackend, config_repo: Path, tmp_path: Path
) -> None:
    health = tmp_path / "health.txt"
    rec = make_reconciler(Options(tiers_s=(20,), health_file=str(health)))
    good = rec.tick().revision
    bad_file = config_repo / "budgets/org/teamb/budget.yaml"
    for i in range(51):
        bad_file.write_text(f"owners: [  # broken {i}\n", encoding="utf-8")
        commit_all(config_repo, f"broken {i}")
    _running_job_and_sick_node(rec, sim, health, 600)
    result = rec.tick()
    assert result.revision == good
    assert "none of the newest 50 commits validates" in (result.newest_rejected or "")
    assert "n1" in _drained(sim) and rec.ledger.rows() > 0
    stalled = rec.status.condition("Stalled")
    assert stalled is not None and stalled.reason == "NewestRevisionRejected"
    assert good is not None and good[:12] in stalled.message
    assert "no commit" not in stalled.message


class RefusingBackend:
    """Refuses to add one user, as Slurm refused ``_svc`` before the name rules were one."""

    name = "sim"

    def __init__(self, inner: SimulatedBackend, user: str) -> None:
        self.inner, self.user = inner, user

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def apply(self, actions: Any, *, dry_run: bool = False) -> Any:
        out = list(self.inner.apply([a for a in actions if a.target != self.user], dry_run=dry_run))
        refused = [a for a in actions if a.target == self.user and isinstance(a, PolicyAction)]
        out += [ActionResult(a, "failed", f"invalid user name {self.user}") for a in refused]
        order = {id(a): i for i, a in enumerate(actions)}
        return tuple(sorted(out, key=lambda r: order[id(r.action)]))


def test_a_commit_the_backend_refuses_on_every_tick_keeps_the_last_good_revision_driven(
    make_reconciler: Any, sim: SimulatedBackend, config_repo: Path, tmp_path: Path
) -> None:
    health = tmp_path / "health.txt"
    backend = RefusingBackend(sim, "svc-bot")
    rec = make_reconciler(Options(tiers_s=(20,), health_file=str(health)), backend=backend)
    good = rec.tick().revision
    write_repo(config_repo, DEFAULT_SHARES)
    leaf = config_repo / "budgets/org/teamb/budget.yaml"
    leaf.write_text(leaf.read_text() + "  - svc-bot\n", encoding="utf-8")
    assert "members:\n  - root\n  - svc-bot\n" in leaf.read_text()
    refused = commit_all(config_repo, "a service account")
    _running_job_and_sick_node(rec, sim, health, 600)
    for _ in range(2):  # every tick: refused again, the contract still driven
        result = rec.tick()
        assert result.revision == refused and rec.status.driving_revision == good
        assert refused in rec.status.rejected_revisions
        assert "n1" in _drained(sim) and rec.ledger.rows() > 0
        assert "refused by the backend" in (result.newest_rejected or "")
    assert rec.status.last_applied_revision == good
    stalled = rec.status.condition("Stalled")
    assert stalled is not None and stalled.status
