"""The budget tree as a table: per node entitlement, window usage, ratio, sibling rank, running
(allocated and unallocated) and pending GPUs.  One builder for a saved run and the live state,
so ``allot status``, the report, the live page and ``/metrics`` show the same numbers.

Ranks among siblings use the core's own Fair Tree comparison (``core.fairshare.level_value``):
a sibling's share of its siblings' usage over its share, lower first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from allotment.core.fairshare import level_value

HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class TreeInputs:
    """What the tree needs, wherever it comes from (all per leaf unless said)."""

    parents: Mapping[str, str | None]  # every node of the cluster's tree -> parent
    shares: Mapping[str, float]  # node -> share among its active siblings
    entitlement_gpus: Mapping[str, float]  # node -> GPUs owed (leaves and inner nodes)
    usage_gpu_hours: Mapping[str, float]
    running_allocated: Mapping[str, int] = field(default_factory=dict)
    running_unallocated: Mapping[str, int] = field(default_factory=dict)
    pending_gpus: Mapping[str, int] = field(default_factory=dict)
    window_s: float = 7 * 86400.0


@dataclass(frozen=True, slots=True)
class TreeRow:
    name: str
    parent: str | None
    depth: int
    leaf: bool
    share: float
    entitlement_gpus: float
    usage_gpu_hours: float
    owed_gpu_hours: float  # entitlement x window: what the node is owed per window
    ratio: float | None  # usage / owed (None when nothing is owed)
    rank: int  # 1-based among its siblings (1 = most under-served, goes first)
    siblings: int
    running_allocated_gpus: int
    running_unallocated_gpus: int
    pending_gpus: int

    @property
    def running_gpus(self) -> int:
        return self.running_allocated_gpus + self.running_unallocated_gpus


def build_tree(inp: TreeInputs) -> list[TreeRow]:
    """Rows in depth-first order, children by rank (the order Fair Tree would serve them)."""
    kids: dict[str | None, list[str]] = {}
    for n, p in inp.parents.items():
        kids.setdefault(p if p in inp.parents else None, []).append(n)

    def total(m: Mapping[str, float] | Mapping[str, int], n: str) -> float:
        return float(m.get(n, 0)) if n not in kids else sum(total(m, c) for c in kids[n])

    rows: list[TreeRow] = []

    def walk(parent: str | None, depth: int) -> None:
        sibs = kids.get(parent, [])
        used = {c: total(inp.usage_gpu_hours, c) for c in sibs}
        all_used = sum(used.values())
        keyed = sorted(
            (level_value(used[c] / all_used if all_used > 0 else 0.0, inp.shares.get(c, 0.0)), -inp.shares.get(c, 0.0), c)
            for c in sibs
        )
        for rank, (_, _, c) in enumerate(keyed, 1):
            ent = inp.entitlement_gpus.get(c, 0.0)
            owed = ent * inp.window_s / HOUR
            rows.append(TreeRow(
                c, parent, depth, c not in kids, inp.shares.get(c, 0.0), ent, used[c], owed,
                used[c] / owed if owed > 0 else None, rank, len(sibs),
                int(total(inp.running_allocated, c)), int(total(inp.running_unallocated, c)),
                int(total(inp.pending_gpus, c)),
            ))
            walk(c, depth + 1)

    walk(None, 0)
    return rows


def compiled_entitlements(compiled: Mapping[str, object], cluster: str) -> dict[str, float]:
    """node -> entitlement GPUs on ``cluster`` from ``allot compile --format json`` output."""
    out: dict[str, float] = {}
    nodes = compiled.get("nodes", [])
    assert isinstance(nodes, list)
    for n in nodes:
        ent = n.get("entitlement_gpus", {}).get(cluster)
        if ent is not None:
            out[str(n["name"])] = float(ent)
    return out


def compiled_parents(compiled: Mapping[str, object]) -> dict[str, str | None]:
    nodes = compiled.get("nodes", [])
    assert isinstance(nodes, list)
    return {str(n["name"]): n.get("parent") for n in nodes}


def program_of(parents: Mapping[str, str | None], leaf: str) -> str:
    """The top-level node under the root a leaf belongs to (its hue family in pictures)."""
    path = [leaf]
    while (p := parents.get(path[-1])) is not None:
        path.append(p)
    return path[-2] if len(path) >= 2 else leaf
