"""The Kubernetes objects that carry allotment's policy, built in one place so that
``allot compile --target kai`` and the live backend's server-side apply write the same fields.

* a budget account is a KAI ``Queue`` (``spec.parentQueue`` = parent account, GPU ``quota`` =
  share x cluster GPUs, ``overQuotaWeight`` = the integer fair-share weight);
* a QOS tier is a child ``Queue`` of every leaf, ``<leaf>-<tier>``, whose ``preemptMinRuntime``
  and ``reclaimMinRuntime`` are the tier's minimum runtime (KAI's minimum runtime is per queue,
  ours per job: a job declares its tier by the queue it names, as with a Slurm QOS), plus a
  ``PriorityClass`` of the same name (its value orders work inside a team; the QOS fields are
  kept in annotations so the policy reads back exactly);
* a user is a ConfigMap ``user-<name>`` in ``allotment-system`` (Kubernetes has no user
  objects; who may use which queue is RBAC on namespaces, outside the scheduler).
"""

from __future__ import annotations

from typing import Any

from allotment.backends.kubernetes import names as n
from allotment.backends.policy import UNALLOCATED_QOS, QosSpec, UserSpec

Obj = dict[str, Any]
QUEUE_API = ("scheduling.run.ai", "v2", "queues")
UNLIMITED = -1  # KAI: no quota / no limit on this resource


def _meta(name: str, kind: str, extra: dict[str, str] | None = None) -> Obj:
    labels = {n.MANAGED_BY: n.FIELD_MANAGER, n.KIND_LABEL: kind, **(extra or {})}
    return {"name": name, "labels": dict(sorted(labels.items()))}


def _resources(gpu_quota: float, gpu_limit: float | None, weight: float) -> Obj:
    """GPUs are what budgets govern; CPU and memory are left to the cluster (unlimited).
    ``gpu_limit`` None leaves the limit unowned (the live backend: the reconciler enforces
    ``max_gpus`` itself, and an operator may set a KAI limit by hand)."""
    free = {"limit": UNLIMITED, "overQuotaWeight": 1, "quota": UNLIMITED}
    gpu: Obj = {"overQuotaWeight": weight, "quota": gpu_quota}
    if gpu_limit is not None:
        gpu["limit"] = gpu_limit
    return {"cpu": dict(free), "gpu": dict(sorted(gpu.items())), "memory": dict(free)}


def budget_queue(
    name: str, parent: str | None, fairshare: int, quota: float, limit: float | None = UNLIMITED
) -> Obj:
    spec: Obj = {"resources": _resources(quota, limit, fairshare)}
    if parent:
        spec["parentQueue"] = n.k8s_name(parent)
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": _meta(n.k8s_name(name), "budget"),
        "spec": spec,
    }


def tier_queue(account: str, qos: QosSpec) -> Obj:
    """Child of leaf ``account`` for tier ``qos``: no quota of its own (the tiers of a team share
    the team's quota by demand), KAI priority from the tier, minimum runtime from the tier."""
    runtime = n.go_duration(qos.preempt_exempt_s)
    spec: Obj = {
        "parentQueue": n.k8s_name(account),
        "preemptMinRuntime": runtime,
        "priority": qos.priority,
        "reclaimMinRuntime": runtime,
        "resources": _resources(0, UNLIMITED, 1),
    }
    labels = {n.ACCOUNT_LABEL: account, n.QOS_LABEL: qos.name}
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": _meta(n.tier_queue(account, qos.name), "tier", labels),
        "spec": spec,
    }


def priority_class(qos: QosSpec) -> Obj:
    """Unallocated work never preempts; allocated tiers preempt lower priorities."""
    p = n.QOS_ANNOTATION_PREFIX
    meta = _meta(n.k8s_name(qos.name), "qos")
    meta["annotations"] = {
        f"{p}min-runtime": n.go_duration(qos.preempt_exempt_s),
        f"{p}preempt": ",".join(qos.preempt),
        f"{p}preempt-mode": qos.preempt_mode,
        f"{p}usage-factor": f"{qos.usage_factor:g}",
    }
    never = qos.name == UNALLOCATED_QOS
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": meta,
        "value": qos.priority,
        "preemptionPolicy": "Never" if never else "PreemptLowerPriority",
        "description": (
            "allotment: unallocated, free and preemptible at any time"
            if never
            else f"allotment: allocated, protected for {n.go_duration(qos.preempt_exempt_s)}"
        ),
    }


def user_config(u: UserSpec) -> Obj:
    meta = _meta(n.user_configmap(u.name), "user")
    meta["namespace"] = n.USERS_NAMESPACE
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {
            "accounts": ",".join(u.accounts),
            "default_account": u.default_account,
            "default_qos": u.default_qos,
            "qos": ",".join(u.qos),
            "user": u.name,
        },
    }
