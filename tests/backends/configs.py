"""Small CompiledConfig values built by hand, so backend tests do not depend on the compiler.

``tree_config({"org": None, "proga": "org", ...}, weights)`` gives a tree whose normalized
shares are the weights divided among siblings, with user ``root`` in every leaf (Slurm jobs in
the integration tests are submitted as root).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from allotment.compile.model import (
    BudgetNode,
    Cluster,
    CompiledConfig,
    GpuType,
    NodeGroup,
    Policy,
    UserInfo,
)

DEFAULT_TREE: dict[str, str | None] = {
    "org": None,
    "proga": "org",
    "teama1": "proga",
    "teama2": "proga",
    "teamb": "org",
}
DEFAULT_WEIGHTS: dict[str, float] = {"org": 1, "proga": 60, "teama1": 40, "teama2": 20, "teamb": 40}


def tree_config(
    tree: Mapping[str, str | None] = DEFAULT_TREE,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    *,
    nodes: int = 4,
    gpus_per_node: int = 8,
    users: Mapping[str, tuple[str, ...]] | None = None,
    policy: Policy | None = None,
    inactive: tuple[str, ...] = (),
    health_file: str | None = None,
    max_gpus: Mapping[str, int] | None = None,
) -> CompiledConfig:
    children: dict[str | None, list[str]] = {}
    for name, parent in tree.items():
        children.setdefault(parent, []).append(name)
    leaves = [n for n in tree if n not in children]
    root = next(n for n, p in tree.items() if p is None)
    order: list[str] = []
    stack = [root]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(sorted(children.get(n, []), reverse=True))
    absolute: dict[str, float] = {}
    shares: dict[str, float] = {}
    for n in order:
        p = tree[n]
        if p is None:
            shares[n] = 1.0
            absolute[n] = 1.0
            continue
        sibs = [s for s in children[p] if s not in inactive]
        total = sum(weights[s] for s in sibs)
        shares[n] = 0.0 if n in inactive else weights[n] / total
        absolute[n] = absolute[p] * shares[n]
    gpus = nodes * gpus_per_node
    cluster = Cluster(
        name="gpulab",
        node_groups=(
            NodeGroup("g", "gpu", gpus_per_node, tuple(f"n{i}" for i in range(1, nodes + 1))),
        ),
        maintenance=(),
        gpus=gpus,
        reference_gpu_hours_per_window=gpus * 168.0,
        health_file=health_file,
    )
    members = dict(users) if users is not None else {"root": tuple(sorted(leaves))}
    budget_nodes = tuple(
        BudgetNode(
            name=n,
            path=n,
            parent=tree[n],
            owners=(),
            leaf=n in leaves,
            weight=float(weights[n]),
            share=shares[n],
            active=n not in inactive,
            clusters=("gpulab",),
            max_gpus=(max_gpus or {}).get(n),
            members=tuple(u for u, accts in members.items() if n in accts),
            absolute={"gpulab": absolute[n]},
            entitlement_gpus={"gpulab": absolute[n] * gpus},
            entitlement_gpu_hours={"gpulab": absolute[n] * gpus * 168.0},
            source=f"budgets/{n}.yaml",
        )
        for n in order
    )
    pol = policy or Policy()
    return CompiledConfig(
        inputs_sha256="0" * 64,
        revision=None,
        at=dt.date(2026, 1, 1),
        clusters={"gpulab": cluster},
        gpu_types={"gpu": GpuType("gpu", 1.0)},
        nodes=budget_nodes,
        users={u: UserInfo(u, tuple(sorted(a)), sorted(a)[0]) for u, a in members.items()},
        policy=pol,
        cluster_policies={"gpulab": pol},
        root=root,
    )
