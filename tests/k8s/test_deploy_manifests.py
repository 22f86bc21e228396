"""deploy/kubernetes/ against the real API server (issue 31, item 6): every manifest is accepted
by server-side validation (server-side apply refuses a field its schema does not declare: a typo)
and comes back with every field it was sent; the Deployment runs two replicas with both probes; the service account may do what the
backend does and nothing more (SubjectAccessReview, the API server's own RBAC answer); and a
reconcile tick as that service account, with its own token, syncs the tree."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.lease_api import LeaseObject, get_lease
from allotment.cli.main import main
from allotment.errors import BackendError
from tests.k8s.cluster import Cluster, kubeconfig
from tests.reconcile.repo import make_repo

pytestmark = pytest.mark.k8s

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
NS = "allotment-system"
SA = f"system:serviceaccount:{NS}:allotment-reconciler"
MANAGER = "allotment-deploy-test"
LEASE = "allotment-reconciler"

_PLURAL = {
    "Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings", "Role": "roles", "RoleBinding": "rolebindings",
    "PersistentVolumeClaim": "persistentvolumeclaims", "Deployment": "deployments",
}


def _docs() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in sorted(DEPLOY.glob("*.yaml")):  # in order: 00-namespace first
        out += [d for d in yaml.safe_load_all(f.read_text()) if d]
    return out


def _path(obj: dict[str, Any]) -> str:
    group_version, kind, meta = obj["apiVersion"], obj["kind"], obj["metadata"]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    ns = f"/namespaces/{meta['namespace']}" if "namespace" in meta else ""
    return f"{base}{ns}/{_PLURAL[kind]}/{meta['name']}"


def _missing(sent: Any, got: Any, at: str = "") -> list[str]:
    """Every path of ``sent`` that ``got`` lacks or holds differently (a pruned, unknown field)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [at or "/"]
        return [m for k, v in sent.items() for m in _missing(v, got.get(k), f"{at}.{k}")]
    if isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return [at]
        return [m for i, (a, b) in enumerate(zip(sent, got, strict=True)) for m in _missing(a, b, f"{at}[{i}]")]
    if got is None or (str(got) != str(sent) and not _same_quantity(sent, got)):
        return [at]
    return []


def _same_quantity(sent: Any, got: Any) -> bool:
    return isinstance(sent, str) and isinstance(got, str) and sent.rstrip("i") == got.rstrip("i")


@pytest.fixture(scope="module")
def applied(kube: KubeClient) -> dict[str, dict[str, Any]]:
    Cluster(kube).reset()  # the backend's namespace may already exist: apply is idempotent
    out = {}
    for obj in _docs():
        got = kube.apply(_path(obj), obj, MANAGER)
        out[f"{obj['kind']}/{obj['metadata']['name']}"] = {"sent": obj, "got": got}
    return out


def test_every_manifest_is_accepted_and_keeps_every_field_it_was_sent(
    applied: dict[str, dict[str, Any]],
) -> None:
    assert set(applied) >= {
        "Namespace/allotment-system", "ServiceAccount/allotment-reconciler",
        "ClusterRole/allotment-reconciler", "ClusterRoleBinding/allotment-reconciler",
        "Role/allotment-reconciler", "RoleBinding/allotment-reconciler",
        "PersistentVolumeClaim/allotment-state", "Deployment/allotment-reconciler",
    }
    pruned = {k: _missing(v["sent"], v["got"]) for k, v in applied.items()}
    assert {k: v for k, v in pruned.items() if v} == {}


def test_a_typo_in_a_manifest_is_caught(kube: KubeClient, applied: Any) -> None:
    dep = next(d for d in _docs() if d["kind"] == "Deployment")
    pod = dep["spec"]["template"]["spec"]["containers"][0]
    pod["readinessProbe"]["httpGet"]["paht"] = pod["readinessProbe"]["httpGet"].pop("path")
    with pytest.raises(BackendError, match=r"readinessProbe\.httpGet\.paht: field not declared in schema"):
        kube.apply(_path(dep), dep, MANAGER, dry_run=True)
    pod["readinessProbe"]["httpGet"]["path"] = pod["readinessProbe"]["httpGet"].pop("paht")
    kube.apply(_path(dep), dep, MANAGER, dry_run=True)  # the same without the typo is accepted
    dep["spec"]["replicas"] = "two"  # a wrong type: refused too
    with pytest.raises((ApiError, BackendError)):
        kube.apply(_path(dep), dep, MANAGER, dry_run=True)


def test_the_deployment_runs_two_leader_electing_replicas_with_both_probes(applied: Any) -> None:
    dep = applied["Deployment/allotment-reconciler"]["got"]
    assert dep["spec"]["replicas"] == 2
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert "--leader-elect" in c["args"] and "--backend=kubernetes" in c["args"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    vols = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    assert vols["state"]["persistentVolumeClaim"]["claimName"] == "allotment-state"
    pvc = applied["PersistentVolumeClaim/allotment-state"]["got"]
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]  # shared by the replicas


def _may(
    kube: KubeClient, verb: str, resource: str, *, group: str = "", ns: str = "", sub: str = "",
    name: str = "",
) -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": SA,
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{NS}"],
            "resourceAttributes": {
                "verb": verb, "resource": resource, "group": group, "namespace": ns, "subresource": sub,
                "name": name,
            },
        },
    }
    got = kube.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)
    return bool(got["status"].get("allowed"))


@pytest.mark.parametrize(
    ("verb", "resource", "group", "ns", "sub"),
    [
        ("list", "nodes", "", "", ""),
        ("patch", "nodes", "", "", ""),
        ("list", "pods", "", "team-a", ""),
        ("patch", "pods", "", "team-a", ""),
        ("create", "pods", "", "team-a", "eviction"),
        ("patch", "queues", "scheduling.run.ai", "", ""),
        ("delete", "priorityclasses", "scheduling.k8s.io", "", ""),
        ("patch", "configmaps", "", NS, ""),
    ],
)
def test_the_service_account_may_do_what_the_backend_does(
    kube: KubeClient, applied: Any, verb: str, resource: str, group: str, ns: str, sub: str
) -> None:
    assert _may(kube, verb, resource, group=group, ns=ns, sub=sub)


@pytest.mark.parametrize(
    ("verb", "name", "allowed"),
    [
        ("get", LEASE, True),
        ("update", LEASE, True),
        ("create", "", True),  # RBAC cannot name the object of a create
        ("get", "kube-scheduler", False),
        ("update", "kube-controller-manager", False),
        ("delete", LEASE, False),
        ("patch", LEASE, False),
        ("list", "", False),
    ],
)
def test_the_service_account_may_elect_through_its_own_lease_only(
    kube: KubeClient, applied: Any, verb: str, name: str, allowed: bool
) -> None:
    assert _may(kube, verb, "leases", group="coordination.k8s.io", ns=NS, name=name) is allowed
    assert not _may(kube, verb, "leases", group="coordination.k8s.io", ns="kube-system", name=name)


@pytest.mark.parametrize(
    ("verb", "resource", "group", "ns"),
    [
        ("get", "secrets", "", NS),
        ("list", "secrets", "", "team-a"),
        ("create", "pods", "", "team-a"),
        ("delete", "nodes", "", ""),
        ("patch", "configmaps", "", "kube-system"),
        ("patch", "deployments", "apps", NS),
        ("create", "clusterrolebindings", "rbac.authorization.k8s.io", ""),
    ],
)
def test_the_service_account_may_do_nothing_more(
    kube: KubeClient, applied: Any, verb: str, resource: str, group: str, ns: str
) -> None:
    assert not _may(kube, verb, resource, group=group, ns=ns)


def test_a_tick_as_the_service_account_syncs_the_tree(
    kube: KubeClient, applied: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The RBAC is enough: one tick with the service account's own token (TokenRequest)."""
    cfg = _sa_kubeconfig(kube, tmp_path)
    make_repo(tmp_path / "budgets")
    argv = [
        "reconcile", "--backend", "kubernetes", "--kubeconfig", str(cfg), "--source",
        str(tmp_path / "budgets"), "--state", str(tmp_path / "state"), "--tiers", "20s,10m", "--once",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    assert "add_account teama1" in capsys.readouterr().out


def _sa_kubeconfig(kube: KubeClient, tmp_path: Path) -> Path:
    """A kubeconfig with the service account's own token (TokenRequest), as a pod gets it."""
    req = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}
    token = kube.request(
        "POST", f"/api/v1/namespaces/{NS}/serviceaccounts/allotment-reconciler/token", body=req
    )["status"]["token"]
    admin = yaml.safe_load(Path(kubeconfig()).read_text())
    admin["users"] = [{"name": "sa", "user": {"token": token}}]
    admin["contexts"] = [{"name": "sa", "context": {"cluster": admin["clusters"][0]["name"], "user": "sa"}}]
    admin["current-context"] = "sa"
    cfg = tmp_path / "sa.kubeconfig"
    cfg.write_text(yaml.safe_dump(admin))
    return cfg


def test_replicas_as_the_service_account_elect_through_the_lease_and_hand_it_over_on_sigterm(
    kube: KubeClient, applied: Any, tmp_path: Path
) -> None:
    """The Deployment's arguments (--leader-elect --lease=kubernetes) with the service account's
    token: the first replica creates and takes allotment-system/allotment-reconciler and ticks,
    the second stands by; SIGTERM hands the Lease over and the second leads under token 2."""
    try:
        kube.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/{LEASE}")
    except ApiError as exc:
        if exc.status != 404:
            raise
    cfg = _sa_kubeconfig(kube, tmp_path)
    make_repo(tmp_path / "budgets")
    dep = next(d for d in _docs() if d["kind"] == "Deployment")
    args = [a for a in dep["spec"]["template"]["spec"]["containers"][0]["args"]
            if a.split("=")[0] in ("--leader-elect", "--lease", "--backend")]
    assert args == ["--backend=kubernetes", "--leader-elect", "--lease=kubernetes"]

    def replica(name: str) -> subprocess.Popen[bytes]:
        argv = [
            sys.executable, "-m", "allotment.cli.main", "reconcile", *args, "--kubeconfig", str(cfg),
            "--source", str(tmp_path / "budgets"), "--state", str(tmp_path / "state"),
            "--tiers", "20s,10m", "--interval", "1s", "--lease-duration", "2s", "--identity", name,
            "--policy-only", "--probe-port", "0",
        ]
        with (tmp_path / f"{name}.log").open("wb") as log:
            return subprocess.Popen(argv, stdout=log, stderr=log)

    def lease() -> LeaseObject | None:
        return get_lease(kube, NS, LEASE)

    def wait(what: str, cond: Callable[[], Any], limit_s: float = 60.0) -> Any:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if got := cond():
                return got
            time.sleep(0.1)
        logs = "".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in tmp_path.glob("*.log"))
        raise AssertionError(f"timed out waiting for {what}\n{logs}")

    procs = [replica("pod-a")]
    try:
        first = wait("pod-a to take the Lease", lambda: (c := lease()) is not None and c.holder == "pod-a" and c)
        assert first.transitions == 1 and first.duration_s == 2
        wait("a tick", lambda: (tmp_path / "state" / "status.json").exists())
        procs.append(replica("pod-b"))
        wait("pod-b to stand by", lambda: "standby: pod-a" in (tmp_path / "pod-b.log").read_text())
        # each replica's /metrics says who leads (the AllotmentNoLeader alert sums them)
        assert _leader_metric(tmp_path / "pod-a.log") == ("pod-a", 1.0)
        assert _leader_metric(tmp_path / "pod-b.log") == ("pod-b", 0.0)
        procs[0].send_signal(signal.SIGTERM)
        assert procs[0].wait(30) == 0
        second = wait("pod-b to take over", lambda: (c := lease()) is not None and c.holder == "pod-b" and c)
        assert second.transitions == 2
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(30)
    last = lease()
    assert last is not None and last.holder == "" and last.transitions == 2  # released on exit


def _leader_metric(log: Path) -> tuple[str, float]:
    """``allotment_leader`` from the replica's probe port (its log names the port)."""
    port = re.search(r"probes on http://127\.0\.0\.1:(\d+)/healthz", log.read_text())
    assert port, log.read_text()
    with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/metrics", timeout=10) as r:
        text = r.read().decode()
    got = re.search(r'^allotment_leader\{identity="([^"]+)"\} (\S+)$', text, re.M)
    assert got, text
    return got.group(1), float(got.group(2))
