"""A tick whose read went stale before it acted holds its preemptions back one tick
(``reconcile.stale_read``): the fidelity gate's CI run of 2026-12-07, where a tick that read a
start pending just before Slurm launched it requeued a job for GPUs that were not free."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from allotment.backends.actions import Action, ClusterAction
from allotment.backends.protocol import JobObs, Observation
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.reconciler import Options
from allotment.reconcile.stale_read import StaleReadGuard, hold_back, overtaken
from tests.reconcile.conftest import T0
from tests.reconcile.raced import Raced


def start(job: str) -> ClusterAction:
    return ClusterAction("set_priority", job, "start", "fits", value=90, nodes=("n1",), release=True)


def requeue(job: str) -> ClusterAction:
    return ClusterAction("requeue", job, "reclaim", "over its share", expect="1")


def obs(**states: str) -> Observation:
    jobs = tuple(
        JobObs(j, "root", "teama1", "alloc-20s", 8, s, T0)  # type: ignore[arg-type]
        for j, s in sorted(states.items())
    )
    return Observation(T0, (), jobs)


class Reads:
    """A fresh read for the guard, counted."""

    def __init__(self, o: Observation) -> None:
        self.o, self.n = o, 0

    def __call__(self) -> Observation:
        self.n += 1
        return self.o


def test_a_start_no_longer_pending_is_overtaken_and_so_is_one_gone() -> None:
    fresh = obs(**{"7": "running", "8": "pending"})
    assert overtaken(["7", "8", "9"], fresh) == ("7", "9")


def test_on_a_stale_read_only_the_preemptions_wait() -> None:
    drain = ClusterAction("drain", "n3", "health", "bad GPU")
    notify = ClusterAction("notify", "5", "reclaim", "session", expect="1", grace_s=60)
    cancel = ClusterAction("cancel", "6", "reclaim", "not resumable")
    plan: list[Action] = [drain, requeue("4"), cancel, start("7"), notify]
    split = hold_back(plan, ("7",))
    assert split.apply == (drain, start("7"))
    assert split.deferred == (requeue("4"), cancel, notify)
    assert [r.code for r in split.deferred_results()] == ["deferred"] * 3
    assert "7" in split.deferred_results()[0].message
    # a read that held: everything
    assert hold_back(plan, ()).apply == tuple(plan)


def test_the_guard_reads_again_only_for_a_plan_that_starts_and_takes() -> None:
    reads = Reads(obs(**{"7": "running"}))
    guard = StaleReadGuard(reads)
    assert guard.split([start("7")]).apply == (start("7"),)  # takes nothing
    assert guard.split([requeue("4")]).apply == (requeue("4"),)  # starts nothing
    assert reads.n == 0
    held = guard.split([requeue("4"), start("7")])
    assert reads.n == 1 and held.deferred == (requeue("4"),)


def test_never_two_ticks_in_a_row_so_a_preemption_waits_at_most_one_interval() -> None:
    """A cluster that launches on its own (Kubernetes) may race every read: the tick after a
    deferring one applies what it decides, stale or not."""
    guard = StaleReadGuard(Reads(obs(**{"7": "running", "8": "running"})))
    plan: Sequence[Action] = [requeue("4"), start("7")]
    assert guard.split(plan).deferred == (requeue("4"),)
    assert guard.split([requeue("4"), start("8")]).deferred == ()  # the next one: applied
    assert guard.split(plan).deferred == (requeue("4"),)  # and the one after may defer again
    # a fresh read that holds lets it all through, and does not count as a deferral
    fresh = StaleReadGuard(Reads(obs(**{"7": "pending"})))
    assert fresh.split(plan).deferred == ()
    assert fresh.deferred_last is False


def _audit(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "state" / "audit.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def _teamb_holds_the_cluster(make_reconciler: Any) -> tuple[Any, Raced, SimulatedBackend, list[str]]:
    """teamb, far over its share and past protection, runs an 8-GPU job on every node."""
    sim = SimulatedBackend([(f"n{i}", 8) for i in range(1, 5)], now=T0)
    raced = Raced(sim)
    rec = make_reconciler(Options(tiers_s=(20,)), backend=raced)
    rec.tick()
    hogs = [sim.submit("teamb", 8, qos="alloc-20s") for _ in range(4)]
    rec.clock.t = sim.state.now = T0 + 3 * 3600
    rec.tick()
    return rec, raced, sim, hogs


def test_a_job_launched_after_the_read_leaves_every_running_job_alone(
    make_reconciler: Any, tmp_path: Path
) -> None:
    """teamb, far over its share past protection, holds the whole cluster; teama1's 8-GPU job
    waits.  The tick decides to requeue one of teamb's jobs for it.  Between its read and its
    actions another of teamb's jobs ends and the cluster runs the waiting job there: the
    requeue has become needless.  It is deferred, and the next tick, on a fresh read, takes
    nothing."""
    rec, raced, sim, hogs = _teamb_holds_the_cluster(make_reconciler)
    waiting = sim.submit("teama1", 8, qos="alloc-20s")
    raced.between = lambda: sim.finish(hogs[3])
    result = rec.tick()
    assert sim.observe().job(waiting).state == "running"  # type: ignore[union-attr]
    codes = {(r.action.kind, r.action.target): r.code for r in result.results}
    deferred = [t for (k, t), c in codes.items() if k == "requeue" and c == "deferred"]
    assert len(deferred) == 1 and deferred[0] in hogs[:3]
    assert codes[("set_priority", waiting)] == "unchanged"
    assert all(sim.observe().job(h).state == "running" for h in hogs[:3])  # type: ignore[union-attr]
    out = [a for a in _audit(tmp_path) if a.get("result") == "deferred"]
    assert [(a["action"], a["target"]) for a in out] == [("requeue", deferred[0])]
    assert "no longer pending" in out[0]["message"] and waiting in out[0]["message"]
    # the next tick reads the truth: nothing to take
    rec.clock.t = sim.state.now = sim.state.now + 5
    again = rec.tick()
    assert not [r for r in again.results if r.action.kind in ("requeue", "cancel")]
    assert all(sim.observe().job(h).state == "running" for h in hogs[:3])  # type: ignore[union-attr]


def test_without_the_race_the_same_tick_requeues(make_reconciler: Any) -> None:
    """The control: the same cluster, nothing in between, and the requeue is applied (so the
    test above fails if the tick would not have taken anything anyway)."""
    rec, _, sim, hogs = _teamb_holds_the_cluster(make_reconciler)
    sim.submit("teama1", 8, qos="alloc-20s")
    result = rec.tick()
    applied = [r.action.target for r in result.results
               if r.action.kind == "requeue" and r.code == "applied"]
    assert len(applied) == 1 and applied[0] in hogs
