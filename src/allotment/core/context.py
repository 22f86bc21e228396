"""Everything a scheduling pass needs besides the changing state: the budget tree of one cluster,
the resolved policy and the scheduling mode.  Built once per run from a ``CompiledConfig``.

Modes: ``budgets`` (the new policy), and the two baselines the simulator compares it with:
``priority`` (the old scheduler: one static level for everyone, per-team concurrent limits for
non-preemptible work, anything beyond the limit runs preemptible on idle GPUs) and ``fifo``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from allotment.compile.model import CompiledConfig, Policy
from allotment.errors import UsageError

Mode = Literal["budgets", "priority", "fifo"]
MODES: tuple[str, ...] = ("budgets", "priority", "fifo")


@dataclass(frozen=True, slots=True)
class TreeNode:
    name: str
    parent: str | None
    children: tuple[str, ...]  # by name
    share: float  # among active siblings
    max_gpus: int | None


@dataclass(frozen=True, slots=True)
class Context:
    cluster: str
    mode: Mode
    policy: Policy
    root: str
    tree: Mapping[str, TreeNode]
    leaves: tuple[str, ...]  # accounts that may run here, by name
    paths: Mapping[str, tuple[str, ...]]  # leaf -> (root, ..., leaf)
    entitlement_gpus: Mapping[str, float]  # leaf -> GPUs owed on a fully healthy cluster
    capacity_gpus: int
    billing_weight: Mapping[str | None, float]  # gpu type -> reference GPU-hours per hour
    epoch: dt.datetime  # wall time of t = 0, to turn boost expiry dates into seconds
    hysteresis: float = 0.1  # ranks must differ by this (relative) before a reclaim preemption
    queue_depth: int = 8  # candidates examined per leaf queue and pass
    # a queue whose victim search failed searches again this much later unless its own head or
    # its own team's victims changed (Slurm re-evaluates preemption on its sched_interval, 60 s)
    preempt_retry_s: float = 60.0
    global_depth: int = 128  # candidates examined per single-queue (fifo/priority) pass
    fairshare_refresh_s: float = 300.0  # Fair Tree ranks are recomputed this often (Slurm: PriorityCalcPeriod 5 min)

    def boost_expiry_s(self, when: dt.datetime) -> float:
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return (when - self.epoch).total_seconds()


def build_context(
    config: CompiledConfig,
    cluster: str,
    *,
    mode: str = "budgets",
    policy: Policy | None = None,
    epoch: dt.datetime | None = None,
) -> Context:
    """Resolve ``config`` for one cluster.  Leaves inactive or not eligible here get no share."""
    if cluster not in config.clusters:
        raise UsageError(
            f"unknown cluster {cluster!r}; known: {', '.join(sorted(config.clusters))}"
        )
    if mode not in MODES:
        raise UsageError(f"unknown policy {mode!r}; choose one of {', '.join(MODES)}")
    cl = config.clusters[cluster]
    pol = policy if policy is not None else config.policy_for(cluster)

    def eligible(name: str) -> bool:
        n = config.node(name)
        return n.active and cluster in n.clusters

    tree: dict[str, TreeNode] = {}
    for n in config.nodes:
        if not eligible(n.name) and n.name != config.root:
            continue
        kids = tuple(sorted(c.name for c in config.children(n.name) if eligible(c.name)))
        total = sum(config.node(k).weight for k in kids) or 1.0
        tree[n.name] = TreeNode(n.name, n.parent, kids, n.share, n.max_gpus)
    # shares renormalized among the siblings eligible on this cluster
    fixed: dict[str, TreeNode] = {}
    for name, t in tree.items():
        if t.parent is None or t.parent not in tree:
            fixed[name] = t
            continue
        sibs = tree[t.parent].children
        total = sum(config.node(s).weight for s in sibs) or 1.0
        fixed[name] = TreeNode(
            name, t.parent, t.children, config.node(name).weight / total, t.max_gpus
        )
    leaves = tuple(sorted(n for n, t in fixed.items() if not t.children and config.node(n).leaf))
    paths: dict[str, tuple[str, ...]] = {}
    for leaf in leaves:
        path = [leaf]
        while (p := fixed[path[-1]].parent) is not None and p in fixed:
            path.append(p)
        paths[leaf] = tuple(reversed(path))
    ent: dict[str, float] = {}
    for leaf in leaves:
        frac = 1.0
        for name in paths[leaf][1:]:
            frac *= fixed[name].share
        caps = [fixed[name].max_gpus for name in paths[leaf] if fixed[name].max_gpus is not None]
        # a capped account cannot be owed more than its cap: the rest is shared out by fair share
        ent[leaf] = min([frac * cl.gpus, *(float(c) for c in caps if c is not None)])
    weights: dict[str | None, float] = {None: 1.0}
    for g in cl.node_groups:
        gt = config.gpu_types.get(g.gpu_type)
        weights[g.gpu_type] = gt.billing_weight if gt is not None else 1.0
    return Context(
        cluster=cluster,
        mode=mode,  # type: ignore[arg-type]
        policy=pol,
        root=config.root,
        tree=fixed,
        leaves=leaves,
        paths=paths,
        entitlement_gpus=ent,
        capacity_gpus=cl.gpus,
        billing_weight=weights,
        epoch=epoch
        if epoch is not None
        else dt.datetime.combine(config.at, dt.time(), tzinfo=dt.UTC),
    )
