"""``allot compile --target kai``: the compiled tree as KAI-Scheduler objects.

One ``Queue`` per budget node (``backends.kubernetes.objects``), one child queue per leaf and
minimum-runtime tier (plus ``<leaf>-unallocated``: no minimum runtime, lowest priority), a
``PriorityClass`` per tier, and the ``SchedulingShard`` holding the fair-share window: KAI's
``usageDBConfig.usageParams`` with ``windowType: sliding`` and ``windowSize`` = the policy's
lookback as a Go duration, ``kValue`` 1 (KAI's default weight of historical usage), and the
shard-wide minimum runtime = the default tier (what a job that names no tier queue gets).
"""

from __future__ import annotations

from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.objects import (
    UNLIMITED,
    Obj,
    budget_queue,
    priority_class,
    tier_queue,
)
from allotment.backends.kubernetes.quota import gpu_quotas
from allotment.backends.policy import (
    DEFAULT_TIERS_S,
    SLURM_ROOT,
    PolicyState,
    default_tier,
    desired_policy,
    qos_tiers,
    slurm_name,
)
from allotment.compile.model import CompiledConfig

K_VALUE = 1.0


def pick_cluster(config: CompiledConfig, cluster: str | None) -> str:
    """The named cluster, the only one, or the largest (as ``--target slurm`` does)."""
    if cluster:
        return cluster
    return next(iter(config.clusters)) if len(config.clusters) == 1 else config.largest_cluster()


def leaves(desired: PolicyState) -> tuple[str, ...]:
    parents = {a.parent for a in desired.accounts}
    return tuple(sorted(a.name for a in desired.accounts if a.name not in parents))


def kai_objects(
    config: CompiledConfig, cluster: str | None = None, tiers_s: tuple[int, ...] = DEFAULT_TIERS_S
) -> list[Obj]:
    name = pick_cluster(config, cluster)
    desired = desired_policy(config, name, tiers_s)
    gpus = config.clusters[name].gpus
    quotas = gpu_quotas(desired.accounts, desired.root, gpus)
    caps = {slurm_name(b.name): b.max_gpus for b in config.nodes if b.max_gpus is not None}
    out: list[Obj] = [scheduling_shard(config, name, tiers_s)]
    out += [priority_class(q) for q in desired.qos]
    for a in desired.accounts:
        parent = None if a.parent == SLURM_ROOT else a.parent
        limit = caps.get(a.name, UNLIMITED)
        out.append(budget_queue(a.name, parent, a.fairshare, quotas[a.name], limit))
    for leaf in leaves(desired):
        out += [tier_queue(leaf, q) for q in desired.qos]
    return out


def scheduling_shard(config: CompiledConfig, cluster: str, tiers_s: tuple[int, ...]) -> Obj:
    policy = config.policy_for(cluster)
    tier = default_tier(tiers_s, policy.default_min_runtime_s)
    runtime = n.go_duration(next(q.preempt_exempt_s for q in qos_tiers(tiers_s) if q.name == tier))
    return {
        "apiVersion": "kai.scheduler/v1",
        "kind": "SchedulingShard",
        "metadata": {"name": "default", "labels": {n.MANAGED_BY: n.FIELD_MANAGER}},
        "spec": {
            "kValue": K_VALUE,
            "minRuntime": {"preemptMinRuntime": runtime, "reclaimMinRuntime": runtime},
            "usageDBConfig": {
                "clientType": "prometheus",
                "usageParams": {
                    "windowSize": n.go_duration(policy.lookback_s),
                    "windowType": "sliding",
                },
            },
        },
    }
