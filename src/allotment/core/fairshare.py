"""Hierarchical fair share: the Fair Tree order of the leaves, and the reclaim measure.

**Fair Tree order** (docs/design/fair-tree.md).  At each level, siblings are ranked by their
*level fair-share value* ``usage / share``, where ``usage`` is the sibling's fraction of the
siblings' combined window usage and ``share`` its share among the siblings funded on this cluster
(``compile.shares``).  Lower is better: the sibling that has had least of what it is owed comes
first (Slurm writes the inverse, S/U).  The whole subtree of a better-ranked sibling comes before
the next sibling, so the leaf order is a depth-first walk.  Ties go to the larger share, then the
name.

**Reclaim measure.**  Preemption across teams compares two accounts directly, not through the tree:
``usage_gpu_hours / entitlement_gpus`` -- how many hours of its whole entitlement the account used
in the window.  Lower is more under-served.  A reclaim needs the victim's measure to exceed the
requester's by the hysteresis margin (``served_more``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.core.context import Context


@dataclass(frozen=True, slots=True)
class LeafRank:
    leaf: str
    rank: int  # 0 is best
    level_fair_share: tuple[float, ...]  # usage/share at each level below the root, root first


def level_value(usage_fraction: float, share: float) -> float:
    """The Fair Tree comparison value of one sibling: lower is better (more under-served)."""
    if share <= 0.0:
        return math.inf
    return usage_fraction / share


def reclaim_measure(usage_gpu_hours: float, entitlement_gpus: float) -> float:
    """Hours of its entitlement an account used in the window; lower = more under-served."""
    if entitlement_gpus <= 0:
        return math.inf
    return usage_gpu_hours / entitlement_gpus


def served_more(victim: float, requester: float, hysteresis: float) -> bool:
    """True when the victim's account was served more than the requester's by the relative
    ``hysteresis`` margin: the only direction in which a reclaim may go."""
    return victim > requester * (1.0 + hysteresis) + 1e-12


def rank_leaves(ctx: Context, usage: Mapping[str, float]) -> tuple[LeafRank, ...]:
    """Order every leaf of ``ctx`` by Fair Tree descent over window ``usage`` (leaf -> GPU-hours)."""
    subtree: dict[str, float] = {}

    def total(name: str) -> float:
        node = ctx.tree[name]
        if not node.children:
            v = max(0.0, usage.get(name, 0.0))
        else:
            v = sum(total(c) for c in node.children)
        subtree[name] = v
        return v

    total(ctx.root)
    out: list[LeafRank] = []

    def walk(name: str, path: tuple[float, ...]) -> None:
        node = ctx.tree[name]
        if not node.children:
            if name in ctx.entitlement_gpus:
                out.append(LeafRank(name, len(out), path))
            return
        sib_total = sum(subtree[c] for c in node.children)
        keyed = []
        for c in node.children:
            frac = subtree[c] / sib_total if sib_total > 0 else 0.0
            share = ctx.tree[c].share
            keyed.append((level_value(frac, share), -share, c))
        keyed.sort()
        for v, _, c in keyed:
            walk(c, (*path, v))

    walk(ctx.root, ())
    return tuple(out)
