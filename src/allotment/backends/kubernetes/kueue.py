"""``allot compile --target kueue``: the compiled tree as Kueue objects.

Inner budget nodes are ``Cohort``s (``spec.parentName`` = parent), leaves are ``ClusterQueue``s
in their parent's cohort with a nominal GPU quota (share x cluster GPUs, split over the GPU types
in proportion to their GPUs) and ``fairSharing.weight`` = the fair-share weight, so borrowed
capacity follows budgets; ``max_gpus`` becomes a borrowing limit.  Each leaf gets a
``LocalQueue`` of the same name in the namespace of the same name, plus one for unallocated
work, which goes to the ``unallocated`` ClusterQueue (no quota: it only borrows, and is
reclaimed first).  QOS tiers become ``WorkloadPriorityClass``es.  Kueue has no minimum runtime
(see docs/kubernetes.md).
"""

from __future__ import annotations

from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.kai import leaves, pick_cluster
from allotment.backends.kubernetes.objects import Obj
from allotment.backends.kubernetes.quota import gpu_quotas
from allotment.backends.policy import (
    DEFAULT_TIERS_S,
    SLURM_ROOT,
    UNALLOCATED_QOS,
    desired_policy,
    slurm_name,
)
from allotment.compile.model import CompiledConfig

API = "kueue.x-k8s.io/v1beta2"


def _meta(name: str, namespace: str | None = None) -> Obj:
    m: Obj = {"name": n.k8s_name(name), "labels": {n.MANAGED_BY: n.FIELD_MANAGER}}
    if namespace:
        m["namespace"] = n.k8s_name(namespace)
    return m


def quantity(x: float) -> str:
    """A Kubernetes quantity string: whole numbers plain, else up to two decimals."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if x else "0"


def kueue_objects(
    config: CompiledConfig, cluster: str | None = None, tiers_s: tuple[int, ...] = DEFAULT_TIERS_S
) -> list[Obj]:
    name = pick_cluster(config, cluster)
    desired = desired_policy(config, name, tiers_s)
    c = config.clusters[name]
    per_type: dict[str, int] = {}
    for g in c.node_groups:
        per_type[n.k8s_name(g.gpu_type.lower())] = per_type.get(
            n.k8s_name(g.gpu_type.lower()), 0
        ) + g.gpus_per_node * len(g.node_names)
    flavors = sorted(per_type)
    quotas = gpu_quotas(desired.accounts, desired.root, c.gpus)
    caps = {slurm_name(b.name): b.max_gpus for b in config.nodes if b.max_gpus is not None}
    out: list[Obj] = [
        {
            "apiVersion": API,
            "kind": "ResourceFlavor",
            "metadata": _meta(f),
            "spec": {"nodeLabels": {"allotment.dev/gpu-type": f}},
        }
        for f in flavors
    ]
    out += [
        {
            "apiVersion": API,
            "kind": "WorkloadPriorityClass",
            "metadata": _meta(q.name),
            "value": q.priority,
            "description": f"allotment QOS {q.name}",
        }
        for q in desired.qos
    ]
    leaf_names = set(leaves(desired))
    for a in desired.accounts:
        if a.name in leaf_names:
            continue
        spec: Obj = {"fairSharing": {"weight": a.fairshare}}
        if a.parent != SLURM_ROOT:
            spec["parentName"] = n.k8s_name(a.parent)
        out.append({"apiVersion": API, "kind": "Cohort", "metadata": _meta(a.name), "spec": spec})

    def groups(account: str) -> list[Obj]:
        share = {f: per_type[f] / c.gpus for f in flavors}
        res = []
        for f in flavors:
            r: Obj = {
                "name": n.GPU_RESOURCE,
                "nominalQuota": quantity(quotas.get(account, 0) * share[f]),
            }
            cap = caps.get(account)
            if cap is not None:
                r["borrowingLimit"] = quantity(
                    max(0.0, cap * share[f] - quotas[account] * share[f])
                )
            res.append({"name": f, "resources": [r]})
        return [{"coveredResources": [n.GPU_RESOURCE], "flavors": res}]

    queues = [(a.name, a.parent, a.fairshare) for a in desired.accounts if a.name in leaf_names]
    queues.append((UNALLOCATED_QOS, desired.root, 1))
    for qname, parent, weight in sorted(queues):
        spec = {
            "cohortName": n.k8s_name(parent),
            "fairSharing": {"weight": weight},
            "namespaceSelector": {},
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": groups(qname),
        }
        if qname == UNALLOCATED_QOS:
            spec["preemption"] = {"reclaimWithinCohort": "Never", "withinClusterQueue": "Never"}
        out.append(
            {"apiVersion": API, "kind": "ClusterQueue", "metadata": _meta(qname), "spec": spec}
        )
    for leaf in sorted(leaf_names):
        for lq, cq in ((leaf, leaf), (UNALLOCATED_QOS, UNALLOCATED_QOS)):
            out.append(
                {
                    "apiVersion": API,
                    "kind": "LocalQueue",
                    "metadata": _meta(lq, namespace=leaf),
                    "spec": {"clusterQueue": n.k8s_name(cq)},
                }
            )
    return out
