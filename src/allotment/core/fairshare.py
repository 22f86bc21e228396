"""Hierarchical fair share, descending the budget tree the way Slurm's Fair Tree does.

At each level, siblings are ranked by ``usage / share`` where ``usage`` is the sibling's fraction
of the siblings' combined window usage and ``share`` its normalized share (lower is better: the
sibling that has had least of what it is owed comes first; Slurm writes the inverse, S/U).  The
whole subtree of a better-ranked sibling comes before the next sibling, so the leaf order is a
depth-first walk.  Ties go to the larger share, then the name.  See docs/design/fair-tree.md.
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
            keyed.append(((level_value(frac, share), -share, c), c))
        keyed.sort()
        for (v, _, _), c in keyed:
            walk(c, (*path, v))

    walk(ctx.root, ())
    return tuple(out)
