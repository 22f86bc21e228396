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

from allotment.core.context import Context, TreeNode


class LeafRank:
    """One funded leaf's place in the Fair Tree order.  Read-only by convention: a plain slotted
    class, since one is made per leaf and epoch and under mypyc a frozen dataclass's ``__init__``
    runs as interpreted Python (a third of ``rank_leaves``)."""

    __slots__ = ("leaf", "level_fair_share", "rank")

    def __init__(self, leaf: str, rank: int, level_fair_share: tuple[float, ...]) -> None:
        self.leaf = leaf
        self.rank = rank  # 0 is best
        self.level_fair_share = level_fair_share  # usage/share at each level below the root, root first

    def __repr__(self) -> str:
        return f"LeafRank({self.leaf!r}, {self.rank}, {self.level_fair_share})"


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
    """Order every leaf of ``ctx`` by Fair Tree descent over window ``usage`` (leaf -> GPU-hours).
    Two plain recursive functions with explicit arguments, not closures: under mypyc a nested
    function is a callable object called generically, and its environment a reference cycle."""
    subtree: dict[str, float] = {}
    _subtree_usage(ctx.tree, ctx.root, usage, subtree)
    out: list[LeafRank] = []
    _descend(ctx.tree, ctx.root, (), subtree, ctx.entitlement_gpus, out)
    return tuple(out)


def _subtree_usage(tree: Mapping[str, TreeNode], name: str, usage: Mapping[str, float],
                   subtree: dict[str, float]) -> float:
    """The window usage of ``name``'s subtree, its leaves' added in child order (kept per node
    in ``subtree``)."""
    children = tree[name].children
    if not children:
        v = max(0.0, usage.get(name, 0.0))
    else:
        v = 0.0
        for c in children:
            v += _subtree_usage(tree, c, usage, subtree)
    subtree[name] = v
    return v


def _descend(tree: Mapping[str, TreeNode], name: str, path: tuple[float, ...], subtree: dict[str, float],
             entitled: Mapping[str, float], out: list[LeafRank]) -> None:
    """Append the funded leaves under ``name`` to ``out`` in Fair Tree order; ``path`` is the
    level values above it.  The siblings' combined usage is their parent's ``subtree`` entry:
    the same floats added in the same order."""
    children = tree[name].children
    if not children:
        if name in entitled:
            out.append(LeafRank(name, len(out), path))
        return
    sib_total = subtree[name]
    keyed: list[tuple[float, float, str]] = []
    for c in children:
        frac = subtree[c] / sib_total if sib_total > 0 else 0.0
        share = tree[c].share
        keyed.append((level_value(frac, share), -share, c))
    keyed.sort()
    for v, _, c in keyed:
        _descend(tree, c, (*path, v), subtree, entitled, out)
