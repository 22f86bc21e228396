"""Small CompiledConfig values built directly from the real dataclasses, for diff and approval
tests that need many shapes of tree (hypothesis) without going through YAML."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.compile.model import BudgetNode, Cluster, CompiledConfig, NodeGroup, Policy

LOOKBACK_H = 7 * 24


@dataclass(frozen=True)
class N:
    """Spec of one node: raw weight, owners, children (leaf when there are none)."""

    weight: float = 1.0
    owners: tuple[str, ...] = ()
    children: Mapping[str, N] | None = None
    max_gpus: int | None = None


def build(root: str, spec: N, gpus: int = 100, policy: Policy | None = None) -> CompiledConfig:
    nodes: list[BudgetNode] = []

    def walk(name: str, s: N, parent: str | None, path: str, share: float, absolute: float) -> None:
        kids = dict(sorted((s.children or {}).items()))
        nodes.append(
            BudgetNode(
                name=name,
                path=path,
                parent=parent,
                owners=s.owners,
                leaf=not kids,
                weight=s.weight,
                share=share,
                active=True,
                clusters=("c1",),
                max_gpus=s.max_gpus,
                members=(),
                absolute={"c1": absolute},
                entitlement_gpus={"c1": absolute * gpus},
                entitlement_gpu_hours={"c1": absolute * gpus * LOOKBACK_H},
                source=f"budgets/{path}/budget.yaml",
            )
        )
        total = sum(k.weight for k in kids.values())
        for k, ks in kids.items():
            sh = ks.weight / total if total else 0.0
            walk(k, ks, name, f"{path}/{k}", sh, absolute * sh)

    walk(root, spec, None, root, 1.0, 1.0)
    cluster = Cluster(
        name="c1",
        node_groups=(NodeGroup("g", "h100", 8, tuple(f"n{i}" for i in range(gpus // 8))),),
        maintenance=(),
        gpus=gpus,
        reference_gpu_hours_per_window=gpus * LOOKBACK_H,
    )
    return CompiledConfig(
        inputs_sha256="0" * 64,
        revision=None,
        at=dt.date(2026, 1, 1),
        clusters={"c1": cluster},
        gpu_types={},
        nodes=tuple(nodes),
        users={},
        policy=policy or Policy(),
        cluster_policies={},
        root=root,
    )
