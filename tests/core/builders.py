"""Small compiled configurations built by hand, so core and sim tests do not depend on YAML."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Union

from allotment.compile.caps import entitlement_gpu_hours, entitlement_gpus
from allotment.compile.model import (
    BudgetNode,
    Cluster,
    CompiledConfig,
    GpuType,
    NodeGroup,
    Policy,
)

Tree = Mapping[str, Union[float, "Tree"]]


def make_config(
    tree: Tree,
    *,
    nodes: int = 4,
    gpus_per_node: int = 8,
    policy: Policy | None = None,
    max_gpus: Mapping[str, int] | None = None,
    cluster: str = "c1",
) -> CompiledConfig:
    """``tree`` maps names to weights (leaves) or to sub-trees; the root is ``org``."""
    gpus = nodes * gpus_per_node
    pol = policy or Policy()
    caps = dict(max_gpus or {})
    out: list[BudgetNode] = []
    names = tuple(f"n{i:03d}" for i in range(nodes))
    cl = Cluster(
        name=cluster,
        node_groups=(NodeGroup("main", "h100", gpus_per_node, names),),
        maintenance=(),
        gpus=gpus,
        reference_gpu_hours_per_window=gpus * pol.lookback_s / 3600,
    )

    def add(name: str, parent: str | None, path: str, weight: float, share: float, absolute: float, sub: Tree | None, above: int | None = None) -> None:
        leaf = sub is None
        # the tightest max_gpus on the path caps what is owed, as the compiler does (compile/caps.py)
        cap = min((c for c in (caps.get(name), above) if c is not None), default=None)
        out.append(
            BudgetNode(
                name=name,
                path=path,
                parent=parent,
                owners=(),
                leaf=leaf,
                weight=weight,
                share=share,
                active=True,
                clusters=(cluster,),
                max_gpus=caps.get(name),
                members=(),
                absolute={cluster: absolute},
                entitlement_gpus={cluster: entitlement_gpus(absolute, cl, cap)},
                entitlement_gpu_hours={cluster: entitlement_gpu_hours(absolute, cl, cap)},
                source=f"budgets/{path}.yaml",
            )
        )
        if sub is None:
            return
        total = sum(_weight(v) for v in sub.values())
        for child in sorted(sub):
            v = sub[child]
            w = _weight(v)
            add(child, name, f"{path}/{child}", w, w / total, absolute * w / total, None if isinstance(v, (int, float)) else v, cap)

    add("org", None, "org", 1.0, 1.0, 1.0, tree)
    return CompiledConfig(
        inputs_sha256="0" * 64,
        revision=None,
        at=dt.date(2026, 1, 1),
        clusters={cluster: cl},
        gpu_types={"h100": GpuType("h100", 1.0)},
        nodes=tuple(out),
        users={},
        policy=pol,
        cluster_policies={},
        root="org",
    )


def _weight(v: float | Tree) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    return float(sum(_weight(x) for x in v.values()))
