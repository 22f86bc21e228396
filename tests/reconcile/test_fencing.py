"""The fencing token, checked on the lease file at every write (reconcile.leadership,
reconcile.file_lease): an old leader whose lease a standby took over writes nothing at all --
not its status, audit, ledger, memory or observation, and applies no backend action -- even
while it still believes it leads (its renewal has not run yet: a paused process).  Clocks are
injected; no process is paused for real here (tests/reconcile/test_replicas.py does that)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.file_lease import FileLease
from allotment.reconcile.leadership import Leadership, LostLease
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.conftest import T0, Clock

LEASE_S = 3600.0  # the renewal thread (every third) never runs within the test: a paused leader


def _files(state: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(state.iterdir()) if p.is_file()}


def test_an_old_leader_past_its_lease_writes_nothing_once_a_standby_took_over(
    tmp_path: Path, config_repo: Path, sim: SimulatedBackend, clock: Clock
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    old = Leadership(FileLease(state, LEASE_S), "old", clock=clock)
    assert old.try_lead() and old.token == 1
    src = GitSource(str(config_repo), "main", state)
    rec = Reconciler(sim, src, state, Options(tiers_s=(20,)), clock=clock, fence=old.fence, token=1)
    rec.tick()  # it leads: accounts, users and QOS are made, everything is written
    sim.submit("teama1", 8)
    sim.advance(30.0)
    rec.tick()
    assert sim.observe().running()

    clock.t += LEASE_S + 1  # its lease runs out while it is paused ...
    new = Leadership(FileLease(state, LEASE_S), "new", clock=clock)
    assert new.try_lead() and new.token == 2  # ... and a standby takes over
    before, policy, nodes = _files(state), sim.observe_policy(), sim.observe().nodes
    sim.set_fairshare_by_hand("teamb", 1)  # drift the old leader would correct
    drifted = sim.observe_policy()

    assert old.record is not None and not old.lost  # it still believes it leads
    with pytest.raises(
        LostLease,
        match=r"fenced: old \(token 1\) may no longer write; the lease is new \(token 2\)'s",
    ):
        rec.tick()
    assert _files(state) == before  # no status, audit, ledger, memory, observation written
    assert sim.observe_policy() == drifted and sim.observe_policy() != policy  # nothing applied
    assert sim.observe().nodes == nodes
    with pytest.raises(LostLease), old.fence():
        pass
    with new.fence():  # the new leader may
        pass
    old.step_down()
    new.step_down()
    rec.close()


def test_tokens_grow_by_one_at_each_takeover_and_a_live_lease_is_not_taken(tmp_path: Path) -> None:
    clock = Clock(T0)
    lease = FileLease(tmp_path, 10.0)
    a, b = (Leadership(lease, n, clock=clock) for n in ("a", "b"))
    assert a.try_lead() and not b.try_lead()
    clock.t += 9.0
    assert lease.renew("a", 1, clock.t) is not None  # renewed: still a's at T0 + 15
    clock.t += 5.0
    assert not b.try_lead()
    clock.t += 6.0
    assert b.try_lead() and b.token == 2 and b.previous is not None and b.previous.holder == "a"
    assert lease.renew("a", 1, clock.t) is None  # the old holder cannot renew it back
    b.release()  # a clean exit hands over at once
    assert a.try_lead() and a.token == 3
    for ld in (a, b):
        ld.step_down()


def test_a_leader_change_is_in_the_audit_log_and_the_status(tmp_path: Path, capsys: Any) -> None:
    from allotment.reconcile.leadership import LeaseRecord
    from allotment.reconcile.replicas import leader_line
    from allotment.reconcile.status import Status, read_status, render_text, save_status

    prev = LeaseRecord("a", 1, T0, T0, T0 + 15)
    line = leader_line(LeaseRecord("b", 2, T0 + 16, T0 + 16, T0 + 31), prev)
    assert '"phase": "leader"' in line and '"previous": "a"' in line and '"token": 2' in line
    st = Status(leader="b", leader_token=2, leader_since=T0 + 16)
    save_status(tmp_path, st)
    again = read_status(tmp_path)
    assert (again.leader, again.leader_token, again.leader_since) == ("b", 2, T0 + 16)
    assert "leader                   b (lease token 2) since 2026-" in render_text(again, T0 + 20)
