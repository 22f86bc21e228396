"""The whole budget tree's absolute shares before and after, per cluster: what the plan report
draws as two icicles (``allot plan --report``).  ``shares.py`` keeps the leaves (what a team is
owed); a reviewer of a tree change also wants the inner nodes, where a program's slice grew or
shrank and which of its children paid for it.

Absolute shares are the compiler's (``BudgetNode.absolute``: the product along the path with
the cluster's restrictions and dates applied), never recomputed here.  A renamed node is one
node under its new name, as in ``shares.share_rows``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from allotment.compile.model import CompiledConfig


@dataclass(frozen=True, slots=True)
class NodeShares:
    name: str  # the head's name (a renamed node is shown under its new name)
    parent_before: str | None  # None: the root, or absent before
    parent_after: str | None
    absolute_before: float  # fraction of the cluster, 0 where absent or inactive
    absolute_after: float
    leaf: bool

    @property
    def delta_pp(self) -> float:
        return (self.absolute_after - self.absolute_before) * 100.0


@dataclass(frozen=True, slots=True)
class ClusterTree:
    cluster: str
    root: str
    nodes: tuple[NodeShares, ...]  # the head's pre-order, then nodes only the base has


def tree_shares(
    base: CompiledConfig, head: CompiledConfig, renamed: Iterable[tuple[str, str]] = ()
) -> tuple[ClusterTree, ...]:
    new_name = dict(renamed)
    before = {new_name.get(n.name, n.name): n for n in base.nodes}
    after = {n.name: n for n in head.nodes}
    order = [n.name for n in head.nodes] + [k for k in before if k not in after]

    def parent(node_parent: str | None) -> str | None:
        return new_name.get(node_parent, node_parent) if node_parent is not None else None

    out = []
    for cluster in sorted(set(base.clusters) | set(head.clusters)):
        nodes = []
        for name in order:
            b, a = before.get(name), after.get(name)
            node = a or b
            assert node is not None  # every name in ``order`` is on one side at least
            nodes.append(NodeShares(
                name,
                parent(b.parent) if b else None,
                a.parent if a else None,
                b.absolute.get(cluster, 0.0) if b else 0.0,
                a.absolute.get(cluster, 0.0) if a else 0.0,
                node.leaf,
            ))
        out.append(ClusterTree(cluster, head.root, tuple(nodes)))
    return tuple(out)
