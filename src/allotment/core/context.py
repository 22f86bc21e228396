"""Everything a scheduling pass needs besides the changing state: the budget tree of one cluster,
the resolved policy and the scheduling mode.  Built once per run from a ``CompiledConfig``.

Shares and entitlements are the compiler's (``compile.shares``), never recomputed here: a
sibling's share on this cluster is its absolute share of the cluster over its parent's, and a
leaf is owed ``entitlement_gpus`` of the compiled tree, which the compiler has already capped by
the tightest ``max_gpus`` on its path (``compile/caps.py``: an account cannot be owed GPUs it may
never run; the rest goes to others by fair share).

Modes (``core.modes``): ``budgets`` (the policy), and the two baselines the simulator compares it
with: ``priority`` (the old scheduler) and ``fifo``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from allotment.compile.model import CompiledConfig, Policy

Mode = Literal["budgets", "priority", "fifo"]
MODES: tuple[str, ...] = ("budgets", "priority", "fifo")


@dataclass(frozen=True, slots=True)
class TreeNode:
    name: str
    parent: str | None
    children: tuple[str, ...]  # funded on this cluster, by name
    share: float  # among the siblings funded on this cluster
    max_gpus: int | None


@dataclass(frozen=True, slots=True)
class Context:
    cluster: str
    mode: Mode
    policy: Policy
    root: str
    tree: Mapping[str, TreeNode]
    leaves: tuple[str, ...]  # accounts funded here, by name
    paths: Mapping[str, tuple[str, ...]]  # leaf -> (root, ..., leaf)
    entitlement_gpus: Mapping[str, float]  # leaf -> GPUs owed on a fully healthy cluster
    capacity_gpus: int
    billing_weight: Mapping[str | None, float]  # gpu type -> reference GPU-hours per hour
    epoch: dt.datetime  # wall time of t = 0, to turn boost expiry dates into seconds

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
    """Resolve ``config`` for one cluster.  Callers check ``cluster`` and ``mode`` first (the CLI
    turns a bad one into a usage error); here they are programming errors."""
    if cluster not in config.clusters:
        raise ValueError(f"unknown cluster {cluster!r}")
    if mode not in MODES:
        raise ValueError(f"unknown policy {mode!r}")
    cl = config.clusters[cluster]
    pol = policy if policy is not None else config.policy_for(cluster)
    absolute = {n.name: n.absolute.get(cluster, 0.0) for n in config.nodes}
    funded = {n.name for n in config.nodes if absolute[n.name] > 0.0} | {config.root}
    tree: dict[str, TreeNode] = {}
    for n in config.nodes:
        if n.name not in funded:
            continue
        kids = tuple(sorted(c.name for c in config.children(n.name) if c.name in funded))
        parent_abs = absolute.get(n.parent, 0.0) if n.parent is not None else 0.0
        share = absolute[n.name] / parent_abs if parent_abs > 0 else 1.0
        tree[n.name] = TreeNode(n.name, n.parent, kids, share, n.max_gpus)
    leaves = tuple(sorted(n.name for n in config.nodes if n.leaf and n.name in funded and n.name != config.root))
    paths: dict[str, tuple[str, ...]] = {}
    for leaf in leaves:
        path = [leaf]
        while (p := tree[path[-1]].parent) is not None and p in tree:
            path.append(p)
        paths[leaf] = tuple(reversed(path))
    # already capped by the tightest max_gpus on the leaf's path: one owner, compile/caps.py
    ent = {leaf: config.node(leaf).entitlement_gpus.get(cluster, 0.0) for leaf in leaves}
    weights: dict[str | None, float] = {None: 1.0}
    for g in cl.node_groups:
        gt = config.gpu_types.get(g.gpu_type)
        weights[g.gpu_type] = gt.billing_weight if gt is not None else 1.0
    return Context(
        cluster=cluster,
        mode=mode,  # type: ignore[arg-type]
        policy=pol,
        root=config.root,
        tree=tree,
        leaves=leaves,
        paths=paths,
        entitlement_gpus=ent,
        capacity_gpus=cl.gpus,
        billing_weight=weights,
        epoch=epoch if epoch is not None else dt.datetime.combine(config.at, dt.time(), tzinfo=dt.UTC),
    )
