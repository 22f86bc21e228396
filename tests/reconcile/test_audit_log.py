"""The audit log records intent before acting and outcome after, and repairs a torn tail on start
(issue 14 item 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.actions import ClusterAction
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.audit import AuditLog
from allotment.reconcile.reconciler import Options
from tests.reconcile.conftest import T0


class DiesAfterApplying:
    """Carries out the cluster actions, then the process dies before it hears back."""

    name = "sim"

    def __init__(self, inner: SimulatedBackend) -> None:
        self.inner = inner

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def apply(self, actions: Any, *, dry_run: bool = False) -> Any:
        done = self.inner.apply(actions, dry_run=dry_run)
        if any(isinstance(a, ClusterAction) for a in actions) and not dry_run:
            raise RuntimeError("killed right after the requeue took effect")
        return done


def test_a_crash_right_after_a_requeue_leaves_it_on_record(
    make_reconciler: Any, sim: SimulatedBackend, tmp_path: Path
) -> None:
    make_reconciler().tick()
    victim = sim.submit("teamb", 8, qos="alloc-20s")
    for _ in range(3):
        sim.submit("teamb", 8, qos="alloc-20s")
    sim.submit("teama1", 8, qos="alloc-20s")
    sim.state.now = T0 + 1800
    dying = make_reconciler(Options(tiers_s=(20,)), backend=DiesAfterApplying(sim))
    dying.clock.t = T0 + 1800
    with pytest.raises(RuntimeError):
        dying.tick()
    dying.close()
    assert sim.observe().job(victim).state == "pending"  # type: ignore[union-attr]  # it happened
    log = AuditLog(tmp_path / "state" / "audit.jsonl")  # a restart repairs the log
    requeues = [e for e in log.read() if e["action"] == "requeue" and e["target"] == victim]
    assert [e["phase"] for e in requeues] == ["intent", "outcome"]
    assert requeues[1]["result"] == "interrupted"
    assert AuditLog(log.path).read() == log.read()  # repairing twice adds nothing


def test_a_cut_last_line_is_set_aside_and_does_not_swallow_the_next_record(
    make_reconciler: Any, sim: SimulatedBackend, tmp_path: Path
) -> None:
    first = make_reconciler()
    first.tick()
    path = tmp_path / "state" / "audit.jsonl"
    lines = path.read_text().splitlines()
    whole = "\n".join(lines[:-1]) + "\n"
    path.write_text(whole + lines[-1][:17])  # the crash cut the last line
    first.close()
    sim.set_fairshare_by_hand("teamb", 7)  # something for the next tick to do
    again = make_reconciler()
    again.tick()
    every = [json.loads(ln) for ln in path.read_text().splitlines()]  # each line is JSON again
    assert any(e["target"] == "teamb" and e.get("result") == "applied" for e in every)
    assert (path.parent / "audit.jsonl.torn").read_text() == lines[-1][:17] + "\n"
