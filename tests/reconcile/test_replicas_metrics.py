"""A replica's /metrics (reconcile.lease_metrics): the leader says 1 and the standby 0, both with
the lease's expiry as they last saw it, so ``AllotmentNoLeader`` (deploy/prometheus) can sum
them; a leader whose lease ran out says 0 before any standby has taken over."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from allotment.reconcile.file_lease import FileLease
from allotment.reconcile.leadership import Leadership
from allotment.reconcile.lease_metrics import exposition
from tests.reconcile.conftest import T0, Clock

LEASE_S = 3600.0


def _samples(ld: Leadership, now: float) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = exposition(ld, now).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


def test_the_leader_says_1_and_a_standby_0_with_the_lease_they_saw(tmp_path: Path) -> None:
    clock = Clock(T0)
    a, b = (Leadership(FileLease(tmp_path, LEASE_S), n, clock=clock) for n in ("a", "b"))
    assert a.try_lead() and not b.try_lead()
    sa, sb = _samples(a, clock.t), _samples(b, clock.t)
    assert sa[("allotment_leader", (("identity", "a"),))] == 1
    assert sb[("allotment_leader", (("identity", "b"),))] == 0
    for who, s in (("a", sa), ("b", sb)):
        key = (("holder", "a"), ("identity", who))
        assert s[("allotment_lease_expiry_timestamp_seconds", key)] == T0 + LEASE_S
        assert s[("allotment_lease_token", key)] == 1
    clock.t += LEASE_S + 1  # its lease ran out (renewals failing, or the process paused)
    assert _samples(a, clock.t)[("allotment_leader", (("identity", "a"),))] == 0
    a.step_down()
