"""Issue 29 on Kubernetes: a session's notice is the documented annotations on every pod of its
gang, then its eviction with the policy's termination grace (SIGTERM now, SIGKILL after the
grace); other work is still evicted with grace 0.  A recording client stands in for the API."""

from __future__ import annotations

from typing import Any

from allotment.backends.actions import ClusterAction, start_key
from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.backend import KubernetesBackend
from allotment.backends.kubernetes.observe import cluster_obs
from allotment.backends.protocol import Observation
from tests.k8s.test_observe import TIERS, node, pod


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def merge_patch(self, path: str, body: Any, manager: str) -> None:
        self.calls.append(("PATCH", path, body))

    def request(self, method: str, path: str, body: Any = None) -> None:
        self.calls.append((method, path, body))


def _backend(job_kind: str | None) -> tuple[KubernetesBackend, Recorder, Observation, str]:
    pods = [pod("s-0", "7", "teama1-alloc-1h", 8, "n1", "2026-12-01T11:00:00Z")]
    if job_kind:
        pods[0]["metadata"]["labels"][n.JOB_KIND_LABEL] = job_kind
    rec = Recorder()
    b = KubernetesBackend(rec)  # type: ignore[arg-type]
    nodes, jobs, b._gangs = cluster_obs([node("n1")], pods, TIERS)
    obs = Observation(1796130000.0, nodes, jobs)
    assert jobs[0].start is not None
    return b, rec, obs, start_key(jobs[0].start)


def test_a_session_notice_annotates_its_pods_then_evicts_them_with_its_grace() -> None:
    b, rec, obs, run = _backend("interactive")
    assert obs.jobs[0].kind == "interactive" and obs.jobs[0].partition == "teama1-alloc-1h"
    a = ClusterAction("notify", "7", "reclaim", "r", expect=run, grace_s=300, restore_hook="allot-restore")
    assert b._cluster(a, obs, dry_run=False).code == "applied"
    (patch, evict) = rec.calls
    assert patch[0] == "PATCH" and patch[2]["metadata"]["annotations"] == {
        n.NOTICE_ANNOTATION: "1796130000", n.GRACE_ANNOTATION: "300", n.RESTORE_HOOK_ANNOTATION: "allot-restore"}
    assert evict[0] == "POST" and evict[1].endswith("/pods/s-0/eviction")
    assert evict[2]["deleteOptions"] == {"gracePeriodSeconds": 300}


def test_other_work_is_evicted_at_once_and_a_notice_for_an_older_run_does_nothing() -> None:
    b, rec, obs, run = _backend(None)
    assert b._cluster(ClusterAction("requeue", "7", "reclaim", "r", expect=run), obs, dry_run=False).code == "applied"
    assert rec.calls[-1][2]["deleteOptions"] == {"gracePeriodSeconds": 0}
    stale = ClusterAction("notify", "7", "reclaim", "r", expect="1", grace_s=300)
    assert b._cluster(stale, obs, dry_run=False).code == "unchanged"
