"""The Kubernetes backend: the backend protocol over a real API server (KAI-Scheduler objects).

* ``observe``: Nodes (GPUs, cordon, readiness) and Pods grouped into gangs (``observe``).
* ``observe_policy``: the managed Queues, PriorityClasses and user ConfigMaps (``policy_sync``).
* ``apply``: policy actions by server-side apply (then quotas and tier queues follow), and
  cluster actions: ``requeue`` evicts every pod of the gang at once (grace 0: the workload's
  controller recreates them pending), ``cancel`` deletes them, ``drain`` cordons a node and
  notes why (its jobs are requeued by the reconciler as they reach their minimum runtime, which
  is what empties it), ``resume`` uncordons a node only allotment cordoned, ``set_priority``
  annotates a pending job's pods.  Each is checked against the state read at the start of the
  call, so a retry is a no-op.

Starting jobs is the cluster's scheduler's job (KAI), as with Slurm.  Every API call has a
timeout and bounded retries (``client``); what fails after them is a ``BackendError``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from allotment.backends.actions import (
    DRAIN_PREFIX,
    Action,
    ActionResult,
    ClusterAction,
    PolicyAction,
    start_key,
)
from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.observe import cluster_obs
from allotment.backends.kubernetes.policy_read import Snapshot, tiers_of
from allotment.backends.kubernetes.policy_sync import PolicySync
from allotment.backends.policy import PolicyState
from allotment.backends.protocol import FinishedRun, Observation
from allotment.errors import BackendError

Obj = Mapping[str, Any]
PODS = "/api/v1/pods"
PARALLEL = 8  # concurrent priority patches (the client's connection pool is larger)
NODES = "/api/v1/nodes"


class KubernetesBackend:
    name = "kubernetes"

    def __init__(self, client: KubeClient, *, clock: Callable[[], float] = time.time) -> None:
        self.client, self.clock = client, clock
        self.policy = PolicySync(client)
        self._gangs: dict[str, list[Obj]] = {}

    @classmethod
    def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, *, timeout_s: float = 10.0
    ) -> KubernetesBackend:
        return cls(KubeClient.from_kubeconfig(path, context, timeout_s=timeout_s))

    # -------------------------------------------------------------------- protocol --
    def observe(self) -> Observation:
        at = self.clock()
        snap = self.policy.snapshot()
        nodes, jobs, self._gangs = cluster_obs(
            self.client.list_all(NODES),
            self.client.list_all(PODS, limit=1000),
            tiers_of(snap),
        )
        return Observation(at, nodes, jobs)

    def config_warnings(self) -> tuple[str, ...] | None:
        """None: nothing is checked here (the scheduler's own settings are not read)."""
        return None

    def history(self, since: float) -> tuple[FinishedRun, ...]:
        """No finished runs: the API server keeps no accounting record (finished pods are
        garbage-collected on the cluster's own schedule), so runs that end while the reconciler
        is down are charged up to its last observation only (docs/kubernetes.md, "What does not
        map exactly").  ``since`` is accepted for the protocol."""
        del since
        return ()

    def observe_policy(self) -> PolicyState:
        return self.policy.state(self.policy.snapshot())

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        out: list[ActionResult] = []
        policy = [a for a in actions if isinstance(a, PolicyAction)]
        if policy:
            snap = self.policy.snapshot()
            gpus = self._cluster_gpus()
            quotas = self.policy.planned_quotas(snap, policy, gpus)
            out += [self.policy.apply(a, snap, quotas, dry_run) for a in policy]
            if not dry_run and any(r.code in ("applied", "pruned") for r in out):
                self.policy.converge_derived(snap, gpus)
        cluster = [a for a in actions if isinstance(a, ClusterAction)]
        if cluster:
            obs = self.observe()
            ordered = [a for a in cluster if a.kind != "set_priority"]
            out += [self._guarded(a, obs, dry_run) for a in ordered]
            # priorities come last in the total order and are independent of each other: they
            # are written in parallel (a full queue's first tick patches 64 jobs' pods)
            prio = [a for a in cluster if a.kind == "set_priority"]
            with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
                out += list(pool.map(lambda a: self._guarded(a, obs, dry_run), prio))
        order = {id(a): i for i, a in enumerate(actions)}
        return tuple(sorted(out, key=lambda r: order[id(r.action)]))

    # ------------------------------------------------------------------- internals --
    def _guarded(self, a: ClusterAction, obs: Observation, dry_run: bool) -> ActionResult:
        try:
            return self._cluster(a, obs, dry_run)
        except BackendError as exc:
            return ActionResult(a, "failed", str(exc))

    def _cluster_gpus(self) -> int:
        nodes, _, _ = cluster_obs(self.client.list_all(NODES), (), {})
        return sum(x.gpus for x in nodes)

    def _cluster(self, a: ClusterAction, obs: Observation, dry_run: bool) -> ActionResult:
        if a.kind in ("drain", "resume"):
            node = obs.node(a.target)
            if node is None:
                raise BackendError(f"no node {a.target}")
            want = a.kind == "drain"
            if node.drain == want or (not want and not node.reason.startswith(DRAIN_PREFIX)):
                return ActionResult(a, "unchanged")
            if not dry_run:
                reason = f"{DRAIN_PREFIX} {a.reason}" if want else None
                patch = {
                    "metadata": {"annotations": {n.DRAIN_ANNOTATION: reason}},
                    "spec": {"unschedulable": True if want else None},
                }
                self.client.merge_patch(f"{NODES}/{a.target}", patch, n.FIELD_MANAGER)
            return ActionResult(a, "dry_run" if dry_run else "applied")
        job = obs.job(a.target)
        pods = self._gangs.get(a.target, [])
        if a.kind in ("requeue", "notify"):
            # keyed by the start it was planned against: a retry finds it pending (or gone)
            if job is None or job.start is None or (a.expect and a.expect != start_key(job.start)):
                return ActionResult(a, "unchanged")
            if not dry_run:
                for p in pods:
                    if a.kind == "notify":  # the documented annotations, then SIGTERM and the grace
                        self.client.merge_patch(_pod_path(p), _notice_patch(a, obs.at), n.FIELD_MANAGER)
                    self._evict(p, a.grace_s)
            return ActionResult(a, "dry_run" if dry_run else "applied", f"evicted {len(pods)} pods")
        if a.kind == "cancel":
            if job is None:
                return ActionResult(a, "unchanged")
            if not dry_run:
                for p in pods:
                    self._delete_pod(p)
            return ActionResult(a, "dry_run" if dry_run else "applied")
        # set_priority: only pending work is reordered
        if job is None or job.state != "pending" or job.priority == a.value:
            return ActionResult(a, "unchanged")
        if not dry_run:
            for p in pods:
                patch = {"metadata": {"annotations": {n.PRIORITY_ANNOTATION: str(a.value)}}}
                self.client.merge_patch(_pod_path(p), patch, n.FIELD_MANAGER)
        return ActionResult(a, "dry_run" if dry_run else "applied")

    def _evict(self, pod: Obj, grace_s: int = 0) -> None:
        """The Eviction subresource (policy/v1beta1 on 1.20), honours PodDisruptionBudgets (a
        429 is retried, then fails the action).  Grace 0 but for a session, whose termination
        grace is its policy's: a session's notice *is* its eviction with that termination grace
        (SIGTERM now, SIGKILL ``grace_s`` later; GraceTime semantics, docs/design/interactive.md),
        and the requeue the reconciler sends after the grace finds it gone."""
        meta = pod["metadata"]
        body = {
            "apiVersion": "policy/v1beta1",
            "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "deleteOptions": {"gracePeriodSeconds": grace_s},
        }
        try:
            self.client.request("POST", f"{_pod_path(pod)}/eviction", body=body)
        except ApiError as exc:
            if exc.status != 404:  # already gone: what we wanted
                raise

    def _delete_pod(self, pod: Obj) -> None:
        try:
            self.client.request("DELETE", _pod_path(pod), body={"gracePeriodSeconds": 0})
        except ApiError as exc:
            if exc.status != 404:
                raise


def _notice_patch(a: ClusterAction, at: float) -> dict[str, Any]:
    """The documented annotations of a session's notice (docs/design/interactive.md)."""
    ann = {n.NOTICE_ANNOTATION: f"{at:.0f}", n.GRACE_ANNOTATION: str(a.grace_s)}
    if a.restore_hook:
        ann[n.RESTORE_HOOK_ANNOTATION] = a.restore_hook
    return {"metadata": {"annotations": ann}}


def _pod_path(pod: Obj) -> str:
    meta = pod["metadata"]
    return f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"


__all__ = ["KubernetesBackend", "Snapshot"]
