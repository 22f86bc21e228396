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

    weight = {n.name: (n.terms.share if n.terms is not None else 1.0) for n in nodes}
    # Per parent: the total weight of its active children, and of its children funded on each
    # cluster (computed once, so the whole pass stays linear in the number of nodes).
    active_total: dict[str, float] = {}
    funded_total: dict[tuple[str, str], float] = {}
    for n in nodes:
        if n.parent is None:
            continue
        w = weight[n.name]
        if active[n.name]:
            active_total[n.parent] = active_total.get(n.parent, 0.0) + w
        for c in funded[n.name]:
            key = (n.parent, c)
            funded_total[key] = funded_total.get(key, 0.0) + w

    out: dict[str, NodeShares] = {}
    for n in nodes:
        mine = funded[n.name]
        if n.parent is None:
            out[n.name] = NodeShares(
                active[n.name], 1.0, {c: 1.0 if c in mine else 0.0 for c in clusters}
            )
            continue
        parent = out[n.parent].absolute
        w = weight[n.name]
        share = w / active_total[n.parent] if active[n.name] else 0.0
        absolute = {
            c: parent[c] * w / funded_total[(n.parent, c)] if c in mine else 0.0 for c in clusters
        }
        out[n.name] = NodeShares(active[n.name], share, absolute)
    return out
