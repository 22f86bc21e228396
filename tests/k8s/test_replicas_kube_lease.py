"""Replicas elected through a real coordination.k8s.io/v1 ``Lease`` (issue 31, item 1): the
kill and pause tests of tests/reconcile/test_replicas.py, with ``--lease kubernetes`` against
the API server the k8s suite starts.  The replicas drive the sim backend with a live workload
(the cluster the assertions read: no action applied twice or lost, the ledger exact) and share
the state dir, as the Deployment's replicas share their volume; only the election moves to the
API server, with the fencing token checked on the Lease and in the state dir at every write.

Lease periods are 2 s (a Lease counts whole seconds; 1 s leaves a busy two-core machine too
little room for a renewal round trip)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.reconcile.kube_lease import open_kube_lease
from allotment.reconcile.leadership import LeaseRecord
from tests.k8s.cluster import kubeconfig
from tests.reconcile.repo import make_repo
from tests.reconcile.test_replicas import (
    ReadLease,
    Replicas,
    kill_the_leader_repeatedly,
    stop_the_leader_past_its_lease,
)

pytestmark = [pytest.mark.k8s, pytest.mark.slow]

LEASE_S = 2
NS = "default"
KILLS = int(os.environ.get("ALLOTMENT_LEASE_KILLS", "20"))
_names = itertools.count(1)


@pytest.fixture
def lease_name() -> str:
    return f"replicas-{os.getpid()}-{next(_names)}"  # a fresh Lease: tokens start at 1


@pytest.fixture
def replicas(tmp_path: Path, lease_name: str) -> Iterator[Replicas]:
    repo = tmp_path / "budgets-repo"
    make_repo(repo)
    extra = (
        "--lease", "kubernetes", "--kubeconfig", kubeconfig(),
        "--lease-namespace", NS, "--lease-name", lease_name,
    )
    r = Replicas(repo, tmp_path / "st", tmp_path / "logs", lease_s=LEASE_S, extra=extra)
    try:
        yield r
    finally:
        for p in r.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)


def _reader(state: Path, name: str) -> ReadLease:
    store = open_kube_lease(kubeconfig(), None, state, LEASE_S, namespace=NS, name=name)

    def read() -> LeaseRecord | None:
        return store.read()

    return read


def test_a_standby_takes_over_each_time_the_leader_is_killed_and_nothing_is_done_twice_or_lost(
    replicas: Replicas, lease_name: str
) -> None:
    kill_the_leader_repeatedly(replicas, _reader(replicas.state, lease_name), KILLS)


def test_an_old_leader_stopped_past_its_lease_writes_nothing_when_it_resumes(
    replicas: Replicas, lease_name: str
) -> None:
    stop_the_leader_past_its_lease(replicas, _reader(replicas.state, lease_name), "fence.lock")
