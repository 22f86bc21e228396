"""The reconciler against a real kube-apiserver: the queue tree, a changed share, a hand edit,
gang eviction past the minimum runtime, an unhealthy node, and a stopped API server.

Tiers are 20 s and 10 min; a job's start is the pod start time the test reports (as a kubelet
would), so "past its minimum runtime" needs no sleeping.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.kubernetes.backend import KubernetesBackend
from allotment.backends.kubernetes.client import KubeClient
from allotment.backends.kubernetes.kai import kai_objects
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.backends.configs import tree_config
from tests.k8s.cluster import Cluster
from tests.reconcile.repo import DEFAULT_SHARES, commit_all, make_repo, write_repo

pytestmark = pytest.mark.k8s
TIERS = (20, 600)
SHORT, LONG = "alloc-20s", "alloc-10m"
QUEUES = "/apis/scheduling.run.ai/v2/queues"
SCRIPT = Path(__file__).parent / "apiserver.sh"


@pytest.fixture
def cluster(kube: KubeClient) -> Cluster:
    c = Cluster(kube)
    c.reset()
    for i in range(1, 5):
        c.add_node(f"n{i}")
    return c


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    # fairshare_period 0s: usage is re-read at every tick, so a tick sees the usage the tick
    # before it recorded (at the default 5m the core reads the usage frozen at the epoch's
    # first tick, reconcile.active.EpochUsage, and these tests would wait for the boundary)
    make_repo(tmp_path / "budgets", health_file=str(tmp_path / "health.txt"), fairshare_period="0s")
    return tmp_path / "budgets"


@pytest.fixture
def reconciler(tmp_path: Path, repo: Path, cluster: Cluster) -> Iterator[Reconciler]:
    backend = KubernetesBackend(KubeClient.from_kubeconfig(os.environ["ALLOTMENT_KUBECONFIG"]))
    rec = Reconciler(
        backend,
        GitSource(str(repo), "main", tmp_path / "state"),
        tmp_path / "state",
        Options(tiers_s=TIERS),
    )
    yield rec
    rec.close()


def queues(kube: KubeClient) -> dict[str, dict[str, Any]]:
    items = kube.list_all(QUEUES, labelSelector="app.kubernetes.io/managed-by=allotment")
    return {q["metadata"]["name"]: q for q in items}


def ok(r: Any) -> None:
    assert r.error is None and [x for x in r.results if x.code == "failed"] == []


def alive(c: Cluster, job: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.pods(job))


# ------------------------------------------------------------------------------ policy --
def test_queue_tree_appears_and_matches_the_compiled_manifests(
    reconciler: Reconciler, kube: KubeClient
) -> None:
    ok(reconciler.tick())
    live = queues(kube)
    want = {
        o["metadata"]["name"]: o
        for o in kai_objects(tree_config(), tiers_s=TIERS)
        if o["kind"] == "Queue"
    }
    assert set(live) == set(want)  # 5 budget queues, 3 leaves x 3 tiers
    for name, obj in want.items():
        spec = dict(obj["spec"])
        if obj["metadata"]["labels"]["allotment.dev/kind"] == "budget":
            spec["resources"]["gpu"].pop("limit")  # the live backend leaves limits unowned
        assert live[name]["spec"] == spec, name
    assert live["teama1"]["spec"]["resources"]["gpu"]["quota"] == 12.8  # 32 x 0.6 x 2/3
    assert reconciler.tick().results == []  # idempotent


def test_a_changed_share_rewrites_exactly_the_changed_queues(
    reconciler: Reconciler, kube: KubeClient, repo: Path
) -> None:
    ok(reconciler.tick())
    before = {k: q["metadata"]["resourceVersion"] for k, q in queues(kube).items()}
    write_repo(repo, {**DEFAULT_SHARES, "teama1": 10}, health_file=str(repo.parent / "health.txt"))
    sha = commit_all(repo, "teama1 shrinks")
    r = reconciler.tick()
    ok(r)
    assert r.revision == sha
    after = queues(kube)
    changed = {k for k, q in after.items() if q["metadata"]["resourceVersion"] != before[k]}
    assert changed == {"teama1", "teama2"}
    gpu = {k: after[k]["spec"]["resources"]["gpu"] for k in changed}
    assert (gpu["teama1"]["overQuotaWeight"], gpu["teama1"]["quota"]) == (3333, 6.4)
    assert (gpu["teama2"]["overQuotaWeight"], gpu["teama2"]["quota"]) == (6667, 12.8)


def test_a_hand_edit_by_another_field_manager_is_reported_and_corrected(
    reconciler: Reconciler, kube: KubeClient
) -> None:
    ok(reconciler.tick())
    patch = {"spec": {"resources": {"gpu": {"overQuotaWeight": 7}}}}
    kube.merge_patch(f"{QUEUES}/teamb", patch, "kubectl-edit")
    r = reconciler.tick()
    ok(r)
    assert r.drift == ["modify_account teamb: fairshare 7 -> 4000"]
    res = next(x for x in r.results if x.action.target == "teamb")
    assert "kubectl-edit: spec.resources.gpu.overQuotaWeight" in res.message
    q = queues(kube)["teamb"]
    assert q["spec"]["resources"]["gpu"]["overQuotaWeight"] == 4000
    owners = {
        m["manager"]
        for m in q["metadata"]["managedFields"]
        if "f:overQuotaWeight" in json.dumps(m.get("fieldsV1", {}))
    }
    assert owners == {"allotment"}
    assert json.loads((reconciler.state_dir / "status.json").read_text())["drift"] == r.drift


# -------------------------------------------------------------------------- preemption --
def test_a_gang_past_its_minimum_runtime_is_evicted_whole_for_an_under_served_team(
    reconciler: Reconciler, cluster: Cluster
) -> None:
    ok(reconciler.tick())
    long_ago = time.time() - 120
    past = cluster.submit("teamb", 8, SHORT, pods=2)  # 2 x 8 GPUs, protected for 20 s only
    inside = cluster.submit("teamb", 8, LONG, pods=2)  # 2 x 8 GPUs, protected for 10 min
    cluster.bind(past, ["n1", "n2"], started=long_ago)
    cluster.bind(inside, ["n3", "n4"], started=long_ago)
    ok(reconciler.tick())  # the ledger starts counting teamb's 32 GPUs
    waiting = cluster.submit("teama1", 8, SHORT)
    r = reconciler.tick()
    ok(r)
    requeued = [x.action.target for x in r.results if x.action.kind == "requeue"]
    assert requeued == [past]
    assert alive(cluster, past) == []  # both pods evicted in the same tick
    assert alive(cluster, inside) == [f"job-{inside}-0-0", f"job-{inside}-0-1"]
    assert all(p["spec"]["nodeName"] for p in cluster.pods(inside))
    assert alive(cluster, waiting) == [f"job-{waiting}-0-0"]
    audit = [e for e in reconciler.audit.read() if e["action"] == "requeue" and e.get("phase") == "outcome"]
    assert [e["target"] for e in audit] == [past] and all(e["reason"] for e in audit)


def test_an_unhealthy_node_is_cordoned_and_emptied_in_step_with_minimum_runtimes(
    reconciler: Reconciler, cluster: Cluster, tmp_path: Path, kube: KubeClient
) -> None:
    ok(reconciler.tick())
    now = time.time()
    done = cluster.submit("teama1", 4, SHORT)
    young = cluster.submit("teama2", 4, LONG)
    cluster.bind(done, ["n1"], started=now - 60)
    cluster.bind(young, ["n1"], started=now - 60)
    (tmp_path / "health.txt").write_text("n1 unhealthy ECC errors on GPU 2\n")
    r = reconciler.tick()
    ok(r)
    acts = {(x.action.kind, x.action.target) for x in r.results if x.code == "applied"}
    assert ("drain", "n1") in acts
    node = kube.get("/api/v1/nodes/n1")
    assert node["spec"]["unschedulable"] is True
    assert node["metadata"]["annotations"]["allotment.dev/drain-reason"].startswith("allotment:")
    assert alive(cluster, done) == []  # past 20 s: moved off at once
    assert alive(cluster, young) != []  # inside 10 min: left running
    ok(reconciler.tick())
    assert alive(cluster, young) != []
    cluster.set_started(f"job-{young}-0-0", now - 700)  # its 10 minutes are over
    r = reconciler.tick()
    ok(r)
    assert ("requeue", young) in {(x.action.kind, x.action.target) for x in r.results}
    assert alive(cluster, young) == []
    (tmp_path / "health.txt").write_text("n1 healthy\n")
    r = reconciler.tick()
    ok(r)
    assert ("resume", "n1") in {(x.action.kind, x.action.target) for x in r.results}
    node = kube.get("/api/v1/nodes/n1")
    assert not node["spec"].get("unschedulable")
    assert "allotment.dev/drain-reason" not in (node["metadata"].get("annotations") or {})


# ------------------------------------------------------------------------------ faults --
def _server(cmd: str) -> None:
    subprocess.run(["bash", str(SCRIPT), cmd], check=True, capture_output=True, timeout=120)


def test_a_stopped_api_server_stalls_the_tick_with_a_reason_and_the_next_converges(
    reconciler: Reconciler, kube: KubeClient
) -> None:
    ok(reconciler.tick())
    _server("stop")
    try:
        t0 = time.monotonic()
        r = reconciler.tick()
        assert time.monotonic() - t0 < 30  # timeouts and bounded retries, no hang
        assert r.error is not None and "unreachable" in r.error
        status = json.loads((reconciler.state_dir / "status.json").read_text())
        stalled = next(c for c in status["conditions"] if c["type"] == "Stalled")
        assert stalled["status"] is True or stalled["status"] == "True"
        assert stalled["reason"] == "BackendFailure" and "unreachable" in stalled["message"]
    finally:
        _server("start")
    kube.merge_patch(
        f"{QUEUES}/teamb", {"spec": {"resources": {"gpu": {"overQuotaWeight": 9}}}}, "kubectl-edit"
    )
    r = reconciler.tick()
    ok(r)
    assert r.drift == ["modify_account teamb: fairshare 9 -> 4000"]
    status = json.loads((reconciler.state_dir / "status.json").read_text())
    stalled = next(c for c in status["conditions"] if c["type"] == "Stalled")
    assert stalled["status"] in (False, "False")
