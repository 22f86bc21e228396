"""The lease as a coordination.k8s.io/v1 ``Lease`` on the real API server (reconcile.kube_lease):
the rule of tests/reconcile/test_fencing.py, on the Kubernetes primitive.  Clocks are injected
(no process is paused here; tests/k8s/test_replicas_kube_lease.py does that with real ones)."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from allotment.backends.kubernetes.client import KubeClient
from allotment.backends.kubernetes.lease_api import get_lease
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.kube_lease import KubeLease, open_kube_lease
from allotment.reconcile.leadership import Leadership, LostLease
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.k8s.cluster import kubeconfig
from tests.reconcile.conftest import T0, Clock
from tests.reconcile.repo import make_repo

pytestmark = pytest.mark.k8s

NS = "default"
_names = itertools.count(1)
LONG_S = 3600  # the renewal thread (every third) never runs within a test: a paused leader


def _store(state: Path, name: str, duration_s: int = LONG_S) -> KubeLease:
    return open_kube_lease(kubeconfig(), None, state, duration_s, namespace=NS, name=name)


@pytest.fixture
def lease_name(kube: KubeClient) -> str:
    name = f"lease-test-{next(_names)}-{threading.get_ident() % 10000}"
    kube.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", query={})
    return name


def test_tokens_grow_by_one_at_each_takeover_and_a_live_lease_is_not_taken(
    tmp_path: Path, lease_name: str, kube: KubeClient
) -> None:
    clock = Clock(T0)
    lease = _store(tmp_path, lease_name, 10)
    a, b = (Leadership(lease, n, clock=clock) for n in ("a", "b"))
    assert a.try_lead() and not b.try_lead()
    obj = get_lease(kube, NS, lease_name)
    assert obj is not None and (obj.holder, obj.transitions, obj.duration_s) == ("a", 1, 10)
    clock.t += 9.0
    assert lease.renew("a", 1, clock.t) is not None  # renewed: still a's at T0 + 19
    clock.t += 5.0
    assert not b.try_lead()
    clock.t += 6.0
    assert b.try_lead() and b.token == 2 and b.previous is not None and b.previous.holder == "a"
    assert lease.renew("a", 1, clock.t) is None  # the old holder cannot renew it back
    b.release()  # a clean exit hands over at once: the Lease shows no holder
    obj = get_lease(kube, NS, lease_name)
    assert obj is not None and obj.holder == "" and obj.transitions == 2
    assert a.try_lead() and a.token == 3
    for ld in (a, b):
        ld.step_down()


def test_of_two_standbys_that_saw_it_expire_exactly_one_takes_it(
    tmp_path: Path, lease_name: str
) -> None:
    clock = Clock(T0)
    first = Leadership(_store(tmp_path, lease_name, 5), "first", clock=clock)
    assert first.try_lead()
    clock.t += 6.0
    # both read the expired Lease, then both write: the API server takes one replace only
    stores = [_store(tmp_path, lease_name, 5) for _ in range(6)]
    won: list[str] = []
    barrier = threading.Barrier(len(stores))

    def race(i: int) -> None:
        barrier.wait()
        rec, _ = stores[i].acquire(f"s{i}", clock.t)
        if rec is not None:
            won.append(rec.holder)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1, won
    cur = stores[0].read()
    assert cur is not None and cur.holder == won[0] and cur.token == 2
    first.step_down()


def test_an_old_leader_past_its_lease_writes_nothing_once_a_standby_took_over(
    tmp_path: Path, lease_name: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    repo = tmp_path / "repo"
    make_repo(repo)
    clock = Clock(T0)
    sim = SimulatedBackend([(f"n{i}", 8) for i in range(1, 5)], now=T0)
    old = Leadership(_store(state, lease_name), "old", clock=clock)
    assert old.try_lead() and old.token == 1
    src = GitSource(str(repo), "main", state)
    rec = Reconciler(sim, src, state, Options(tiers_s=(20,)), clock=clock, fence=old.fence, token=1)
    rec.tick()
    sim.submit("teama1", 8)
    sim.advance(30.0)
    rec.tick()
    assert sim.observe().running()

    clock.t += LONG_S + 1  # its lease runs out while it is paused ...
    new = Leadership(_store(state, lease_name), "new", clock=clock)
    assert new.try_lead() and new.token == 2  # ... and a standby takes over
    before = {p.name: p.read_bytes() for p in sorted(state.iterdir()) if p.is_file()}
    sim.set_fairshare_by_hand("teamb", 1)
    drifted = sim.observe_policy()
    assert old.record is not None and not old.lost  # it still believes it leads
    with pytest.raises(LostLease, match=r"fenced: old \(token 1\) may no longer write"):
        rec.tick()
    assert {p.name: p.read_bytes() for p in sorted(state.iterdir()) if p.is_file()} == before
    assert sim.observe_policy() == drifted  # nothing applied
    with new.fence():
        pass
    old.step_down()
    new.step_down()
    rec.close()


def test_a_write_that_passed_its_check_holds_off_the_takeover_until_it_ends(
    tmp_path: Path, lease_name: str
) -> None:
    """The Lease is read before the write; the state dir's fencing token holds through it: a
    standby that takes the Lease meanwhile cannot raise the token (and so cannot lead) until
    the old leader's write has ended, and the old leader's next write is refused."""
    clock = Clock(T0)
    old = Leadership(_store(tmp_path, lease_name, 5), "old", clock=clock)
    assert old.try_lead()
    new = Leadership(_store(tmp_path, lease_name, 5), "new", clock=clock)
    took = threading.Event()
    with old.fence():  # checked, now writing (paused here, say) ...
        clock.t += 6.0  # ... past its lease
        t = threading.Thread(target=lambda: new.try_lead() and took.set())
        t.start()
        assert not took.wait(1.0), "the takeover completed in the middle of a fenced write"
    t.join(10)
    assert took.is_set() and new.token == 2
    with pytest.raises(LostLease), old.fence():
        pass
    old.step_down()
    new.step_down()


def test_a_deleted_lease_does_not_start_the_tokens_again(
    tmp_path: Path, lease_name: str, kube: KubeClient
) -> None:
    clock = Clock(T0)
    a = Leadership(_store(tmp_path, lease_name, 5), "a", clock=clock)
    assert a.try_lead() and a.token == 1
    a.release()
    kube.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/{lease_name}")
    b = Leadership(_store(tmp_path, lease_name, 5), "b", clock=clock)
    assert b.try_lead() and b.token == 2  # past the state dir's token, not 1 again
    b.step_down()
