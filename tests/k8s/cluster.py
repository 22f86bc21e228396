"""The parts of a cluster that no API server runs by itself, played by the tests: Nodes (as a
kubelet registers them), a binder (as a scheduler binds pods), a pod status (as a kubelet
reports a start) and a workload controller (recreating the pods of an evicted job, pending).

Everything goes through the real API server; nothing here decides policy.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.backend import KubernetesBackend
from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.observe import gangs, pod_gpus
from allotment.backends.protocol import Observation

NS = "allotment-jobs"
TEST_LABEL = "allotment.dev/test"
PODS = f"/api/v1/namespaces/{NS}/pods"


def kubeconfig() -> str:
    path = os.environ.get("ALLOTMENT_KUBECONFIG", "")
    if not path or not os.path.exists(path):
        pytest.fail("ALLOTMENT_KUBECONFIG is not set: run `make test-k8s` (tests/k8s/run.sh)")
    return path


def stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(int(t), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Cluster:
    client: KubeClient
    next_id: int = 1
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # job id -> how to recreate
    not_before: dict[str, float] = field(default_factory=dict)
    requeue_delay_s: float = 3.0

    # ------------------------------------------------------------------- cluster --
    def reset(self) -> None:
        c = self.client
        q = {"labelSelector": f"{n.MANAGED_BY}={n.FIELD_MANAGER}"}
        for path in (
            "/apis/scheduling.run.ai/v2/queues",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            f"/api/v1/namespaces/{n.USERS_NAMESPACE}/configmaps",
        ):
            try:
                c.request("DELETE", path, query=q)
            except ApiError as exc:
                if exc.status != 404:
                    raise
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
        c.apply(f"/api/v1/namespaces/{NS}", ns, "allotment-tests")
        c.request("DELETE", PODS, query={"gracePeriodSeconds": "0"})
        c.request("DELETE", "/api/v1/nodes", query={"labelSelector": TEST_LABEL})
        self.specs.clear()
        self.not_before.clear()

    def add_node(self, name: str, gpus: int = 8, *, ready: bool = True) -> None:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {TEST_LABEL: "1"}},
            "spec": {},
            "status": {
                "capacity": {n.GPU_RESOURCE: str(gpus), "cpu": "64", "pods": "110"},
                "allocatable": {n.GPU_RESOURCE: str(gpus), "cpu": "64", "pods": "110"},
                "conditions": [_ready(ready)],
            },
        }
        self.client.request("POST", "/api/v1/nodes", body=node)

    def set_ready(self, name: str, ready: bool) -> None:
        patch = {"status": {"conditions": [_ready(ready)]}}
        self.client.merge_patch(f"/api/v1/nodes/{name}/status", patch, "kubelet")

    # ---------------------------------------------------------------------- jobs --
    def submit(
        self,
        account: str,
        gpus_per_pod: int,
        qos: str,
        *,
        pods: int = 1,
        user: str = "root",
        annotations: dict[str, str] | None = None,
    ) -> str:
        job = str(self.next_id)
        self.next_id += 1
        self.specs[job] = {
            "queue": n.tier_queue(account, qos),
            "gpus": gpus_per_pod,
            "pods": pods,
            "user": user,
            "annotations": dict(annotations or {}),
            "gen": 0,
        }
        self._create(job)
        return job

    def _create(self, job: str) -> None:
        s = self.specs[job]
        for i in range(s["pods"]):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"job-{job}-{s['gen']}-{i}",
                    "labels": {
                        n.JOB_LABEL: job,
                        n.QUEUE_LABEL: s["queue"],
                        n.USER_LABEL: s["user"],
                    },
                    "annotations": s["annotations"],
                },
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.invalid/train:1",
                            "resources": {"limits": {n.GPU_RESOURCE: str(s["gpus"])}},
                        }
                    ],
                },
            }
            self.client.request("POST", PODS, body=pod)

    def pods(self, job: str) -> list[dict[str, Any]]:
        return self.client.list_all(PODS, labelSelector=f"{n.JOB_LABEL}={job}")

    def bind(self, job: str, nodes: list[str], *, started: float | None = None) -> None:
        """Bind the job's pods (one per listed node) and report them running since ``started``."""
        for pod, node in zip(
            sorted(self.pods(job), key=lambda p: p["metadata"]["name"]), nodes, strict=True
        ):
            name = pod["metadata"]["name"]
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }
            self.client.request("POST", f"{PODS}/{name}/binding", body=binding)
            self.set_started(name, time.time() if started is None else started)

    def set_started(self, pod: str, t: float) -> None:
        status = {"status": {"phase": "Running", "startTime": stamp(t)}}
        self.client.merge_patch(f"{PODS}/{pod}/status", status, "kubelet")

    def step(self) -> None:
        """One round of the controller and the binder: an evicted job's pods come back pending
        (bound again after ``requeue_delay_s``); pending single-pod jobs go to the emptiest
        uncordoned node where they fit, in job order."""
        now = time.time()
        live = gangs(self.client.list_all(PODS))
        for job, s in self.specs.items():
            if job not in live:
                s["gen"] += 1
                self._create(job)
                self.not_before[job] = now + self.requeue_delay_s
        live = gangs(self.client.list_all(PODS))
        nodes = self.client.list_all("/api/v1/nodes", labelSelector=TEST_LABEL)
        free = {
            x["metadata"]["name"]: int(x["status"]["allocatable"][n.GPU_RESOURCE])
            for x in nodes
            if not x["spec"].get("unschedulable")
        }
        for members in live.values():
            for p in members:
                host = p["spec"].get("nodeName")
                if host in free:
                    free[host] -= pod_gpus(p)
        for job in sorted((j for j in live if j.isdigit()), key=int):
            members = live[job]
            if any(p["spec"].get("nodeName") for p in members) or len(members) != 1:
                continue
            if self.not_before.get(job, 0) > now:
                continue
            need = pod_gpus(members[0])
            fits = sorted((g, h) for h, g in free.items() if g >= need)
            if fits:
                host = fits[0][1]
                self.bind(job, [host])
                free[host] -= need


def _ready(ready: bool) -> dict[str, str]:
    return {
        "type": "Ready",
        "status": "True" if ready else "False",
        "reason": "KubeletReady" if ready else "KubeletNotReady",
        "message": "kubelet is posting ready status" if ready else "GPU fell off the bus",
    }


class KubeHarness:
    """The contract harness (tests/backends/contract.py) for the Kubernetes backend."""

    tiers_s = (20,)

    def __init__(self, client: KubeClient) -> None:
        self.cluster = Cluster(client)
        self.backend = KubernetesBackend(client)
        self.cluster.reset()
        for i in range(1, 5):
            self.cluster.add_node(f"n{i}")

    def submit(self, account: str, gpus: int, qos: str) -> str:
        return self.cluster.submit(account, gpus, qos)

    def wait(
        self, what: str, pred: Callable[[Observation], bool], timeout: float = 30
    ) -> Observation:
        deadline = time.monotonic() + timeout
        while True:
            self.cluster.step()
            obs = self.backend.observe()
            if pred(obs):
                return obs
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.2)

    def set_fairshare_by_hand(self, account: str, fairshare: int) -> None:
        patch = {"spec": {"resources": {"gpu": {"overQuotaWeight": fairshare}}}}
        self.cluster.client.merge_patch(
            f"/apis/scheduling.run.ai/v2/queues/{account}", patch, "kubectl-edit"
        )


@pytest.fixture(scope="session")
def kube() -> KubeClient:
    return KubeClient.from_kubeconfig(kubeconfig(), timeout_s=10)


@pytest.fixture
def harness(kube: KubeClient) -> Iterator[KubeHarness]:
    yield KubeHarness(kube)
