"""Contract and ledger decisions use the backend's clock, and a skew beyond the bound stops all
job and node actions (issue 14 item 6); jobs that end while the reconciler is down are charged
from the backend's history (item 11).  Simulated backend; tests/slurm has the same on Slurm."""

from __future__ import annotations

from typing import Any

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.reconciler import Options
from tests.reconcile.conftest import T0


def _full_cluster_with_a_waiting_team(sim: SimulatedBackend) -> None:
    for _ in range(4):
        sim.submit("teamb", 8, qos="alloc-10m")
    sim.submit("teama1", 8, qos="alloc-10m")  # under-served: the core wants room for it


def test_a_reconciler_clock_an_hour_ahead_stalls_and_neither_requeues_nor_charges(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler(Options(tiers_s=(600,)))
    rec.tick()
    _full_cluster_with_a_waiting_team(sim)
    sim.state.now = T0 + 30
    rec.clock.t = T0 + 30 + 3600
    result = rec.tick()
    assert result.skew is not None and not result.skew.ok
    assert [r for r in result.results if r.action.kind in ("requeue", "set_priority")] == []
    assert rec.ledger.rows() == 0
    stalled = rec.status.condition("Stalled")
    assert stalled is not None and stalled.status and stalled.reason == "ClockSkew"
    assert "3600 s behind ours" in stalled.message
    assert rec.status.clock_skew_s == -3600


def test_within_the_bound_time_is_the_backends_so_protection_and_usage_are_exact(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler(Options(tiers_s=(600,), max_skew_s=60))
    rec.tick()
    _full_cluster_with_a_waiting_team(sim)
    sim.state.now = T0 + 60
    rec.clock.t = T0 + 60 + 45  # 45 s ahead: tolerated, but never used for a decision
    result = rec.tick()
    assert result.skew is not None and result.skew.ok
    assert [r for r in result.results if r.action.kind == "requeue"] == []  # 60 s < 10 min
    assert rec.ledger.usage(T0 + 60, 86400) == {"teamb": pytest.approx(32 * 60 / 3600)}


def test_jobs_that_end_while_the_reconciler_is_down_are_charged_in_full(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    rec.tick()
    seen = sim.submit("teamb", 8, qos="alloc-20s")
    rec.clock.t = sim.state.now = T0 + 60
    rec.tick()  # seen running for 60 s
    rec.close()  # ... and the reconciler is down from here
    sim.advance(3540)
    sim.finish(seen)  # ran 1 h in all, ended during the outage
    unseen = sim.submit("teama1", 4, qos="alloc-20s")
    sim.advance(1800)
    sim.finish(unseen)  # started and ended during the outage
    sim.submit("teama2", 8, qos="unallocated")
    sim.advance(600)
    back = make_reconciler()
    back.clock.t = sim.state.now
    back.tick()
    usage = back.ledger.usage(sim.state.now, 86400)
    assert usage == {"teamb": pytest.approx(8.0), "teama1": pytest.approx(2.0)}
    back.clock.t = sim.state.now = sim.state.now + 10
    back.tick()  # the history is idempotent: nothing charged twice
    assert back.ledger.usage(sim.state.now, 86400) == usage


def test_the_simulated_backends_history_survives_save_and_load(
    make_reconciler: Any, sim: SimulatedBackend, tmp_path: Any
) -> None:
    make_reconciler().tick()
    job = sim.submit("teamb", 8, qos="alloc-20s")
    sim.advance(100)
    sim.finish(job)
    sim.save(tmp_path / "sim.json")
    again = SimulatedBackend.load(tmp_path / "sim.json")
    assert again.history(T0) == sim.history(T0) != ()
    assert again.history(T0 + 101) == ()
    (run,) = again.history(T0)
    assert (run.id, run.start, run.end, run.gpus, run.min_runtime_s) == (job, T0, T0 + 100, 8, 20)
