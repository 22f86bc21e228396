"""Issue 29, items 1-2 on the reconciler: a session (the policy's interactive class) past its
minimum runtime that must make room is given notice, keeps running through its grace, and only
then is requeued; the notice survives a restart of the reconciler (reconcile.grace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from allotment.backends.actions import ClusterAction
from allotment.backends.protocol import JobObs, Observation
from allotment.backends.simulated import SimulatedBackend
from allotment.backends.slurm.commands import cluster_command
from allotment.backends.slurm.parse import declared_kind
from allotment.reconcile.grace import Notice, in_grace, noticed_at
from allotment.reconcile.reconciler import Options
from tests.reconcile.conftest import T0
from tests.reconcile.repo import make_repo

SESSIONS = "interactive:\n  partitions: [interactive]\n  grace: 60s\n  restore_hook: allot-restore\n"


@pytest.fixture
def config_repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "budgets-repo", extra_policy=SESSIONS)
    return tmp_path / "budgets-repo"


def _acted(result: Any, kind: str) -> list[str]:
    return [r.action.target for r in result.results if r.action.kind == kind and r.code == "applied"]


def _crowd(make_reconciler: Any, sim: SimulatedBackend, partition: str) -> tuple[Any, list[str]]:
    """teamb's sessions fill the cluster for 3 h; then teama1 waits for a node."""
    rec = make_reconciler(Options(tiers_s=(20,)))
    rec.tick()
    hogs = [sim.submit("teamb", 8, qos="alloc-20s", partition=partition) for _ in range(4)]
    rec.clock.t = sim.state.now = T0 + 3 * 3600
    rec.tick()
    sim.submit("teama1", 8, qos="alloc-20s")
    return rec, hogs


def test_a_session_past_its_minimum_runtime_gets_notice_then_its_grace_then_the_requeue(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec, hogs = _crowd(make_reconciler, sim, "interactive")
    first = rec.tick()
    noticed = _acted(first, "notify")
    assert len(noticed) == 1 and noticed[0] in hogs and not _acted(first, "requeue")
    job = noticed[0]
    notice = next(r.action for r in first.results if r.action.kind == "notify")
    assert isinstance(notice, ClusterAction) and (notice.grace_s, notice.restore_hook) == (60, "allot-restore")
    rec.clock.t = sim.state.now = T0 + 3 * 3600 + 30  # inside the grace: it keeps running
    mid = rec.tick()
    assert not _acted(mid, "requeue") and not _acted(mid, "notify")
    assert sim.observe().job(job).state == "running"  # type: ignore[union-attr]
    rec.clock.t = sim.state.now = T0 + 3 * 3600 + 61  # the grace has passed
    assert _acted(rec.tick(), "requeue") == [job]
    assert sim.state.jobs[job].notices == 1


def test_a_restarted_reconciler_neither_notifies_twice_nor_cuts_the_grace_short(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec, _ = _crowd(make_reconciler, sim, "interactive")
    job = _acted(rec.tick(), "notify")[0]
    rec.close()
    again = make_reconciler(Options(tiers_s=(20,)))  # the same state dir: a restart
    again.clock.t = sim.state.now = T0 + 3 * 3600 + 30
    mid = again.tick()
    assert not _acted(mid, "notify") and not _acted(mid, "requeue")
    again.clock.t = sim.state.now = T0 + 3 * 3600 + 61
    assert _acted(again.tick(), "requeue") == [job]
    assert sim.state.jobs[job].notices == 1


def test_work_that_is_not_a_session_is_requeued_at_once(make_reconciler: Any, sim: SimulatedBackend) -> None:
    rec, _ = _crowd(make_reconciler, sim, "batch")
    result = rec.tick()
    assert not _acted(result, "notify") and len(_acted(result, "requeue")) == 1


def test_a_notice_belongs_to_one_run_a_restarted_session_gets_a_new_one() -> None:
    old = {"7": Notice("1000", 1200.0)}  # given to the run that started at 1000
    assert noticed_at(old, "7", "5000") is None  # the run that started at 5000 was never told
    assert noticed_at({"7": Notice("5000", 8950.0)}, "7", "5000") == 8950.0
    running = JobObs("7", "u", "a", "q", 8, "running", 0.0, start=5000.0, partition="interactive")
    obs = Observation(9000.0, (), (running,))
    assert in_grace(obs, {"7": Notice("5000", 8950.0)}, 60) == ["7: session in its grace, 10s left"]
    assert in_grace(obs, {"7": Notice("5000", 8940.0)}, 60) == []  # the grace has passed
    assert in_grace(obs, old, 60) == []


def test_slurm_gives_notice_with_sigterm_to_every_step_and_the_batch_shell() -> None:
    a = ClusterAction("notify", "42", "reclaim", "r", expect="1000", grace_s=60)
    assert cluster_command(a) == ["scancel", "--signal=TERM", "--full", "42"]
    assert declared_kind("kind=interactive") == "interactive"
    assert declared_kind("project x; kind=train") == "train"
    assert declared_kind("kinder=3") is None and declared_kind("") is None
