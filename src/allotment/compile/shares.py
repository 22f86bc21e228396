"""The share arithmetic: normalized shares among siblings and absolute shares of each cluster.

Rules (docs/concepts.md, "Shares"):

1. A node is *active* at date D when its parent is active and D lies in [start, end] (inclusive).
2. ``share`` = own weight / sum of the weights of the active siblings; 0 when inactive.
3. A node is *funded* on cluster C when it is active, may use C (restrictions are inherited), and
   is a leaf or has at least one funded child on C.  Funding is what keeps capacity from being
   lost: a subtree that cannot use C passes its part of C to its siblings.
4. ``absolute[C]`` = parent's ``absolute[C]`` x weight / sum of the weights of the siblings funded
   on C; the root holds 1 of every cluster some leaf can use.  Hence the funded leaves' absolute
   shares of C sum to exactly 1 (up to float rounding).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.config.loaded import LoadedNode


@dataclass(frozen=True, slots=True)
class NodeShares:
    active: bool
    share: float
    absolute: Mapping[str, float]


def _is_active(n: LoadedNode, at: dt.date) -> bool:
    t = n.terms
    if t is None:
        return True
    return (t.start is None or t.start <= at) and (t.end is None or at <= t.end)


def compute_shares(
    nodes: tuple[LoadedNode, ...], at: dt.date, clusters: tuple[str, ...]
) -> dict[str, NodeShares]:
    """``nodes`` in pre-order (parents before children).  Returns shares by node name."""
    by_name = {n.name: n for n in nodes}
    active: dict[str, bool] = {}
    for n in nodes:  # pre-order: the parent is decided first
        active[n.name] = _is_active(n, at) and (n.parent is None or active[n.parent])
    funded: dict[str, frozenset[str]] = {}
    for n in reversed(nodes):  # post-order: children are decided first
        if not active[n.name]:
            funded[n.name] = frozenset()
        elif n.leaf:
            funded[n.name] = frozenset(n.clusters)
        else:
            below = frozenset().union(*(funded[c] for c in n.children))
            funded[n.name] = below & frozenset(n.clusters)

    def weight(name: str) -> float:
        terms = by_name[name].terms
        return terms.share if terms is not None else 1.0

    out: dict[str, NodeShares] = {}
    for n in nodes:
        if n.parent is None:
            out[n.name] = NodeShares(
                active[n.name], 1.0, {c: 1.0 if c in funded[n.name] else 0.0 for c in clusters}
            )
            continue
        siblings = by_name[n.parent].children
        parent = out[n.parent]
        total_active = sum(weight(s) for s in siblings if active[s])
        share = weight(n.name) / total_active if active[n.name] else 0.0
        absolute: dict[str, float] = {}
        for c in clusters:
            if c not in funded[n.name]:
                absolute[c] = 0.0
                continue
            total = sum(weight(s) for s in siblings if c in funded[s])
            absolute[c] = parent.absolute[c] * weight(n.name) / total
        out[n.name] = NodeShares(active[n.name], share, absolute)
    return out
