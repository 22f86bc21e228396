"""The budget tree as a networkx DiGraph, for tools that want graph algorithms (paths, subtrees,
drawing).  Edges run parent -> child; every BudgetNode field is a node attribute."""

from __future__ import annotations

import networkx as nx

from allotment.compile.model import CompiledConfig


def build_graph(config: CompiledConfig) -> nx.DiGraph:
    g = nx.DiGraph(root=config.root, at=config.at.isoformat(), inputs_sha256=config.inputs_sha256)
    for n in config.nodes:
        g.add_node(
            n.name,
            path=n.path,
            owners=n.owners,
            leaf=n.leaf,
            weight=n.weight,
            share=n.share,
            active=n.active,
            clusters=n.clusters,
            max_gpus=n.max_gpus,
            members=n.members,
            absolute=dict(n.absolute),
            entitlement_gpus=dict(n.entitlement_gpus),
            entitlement_gpu_hours=dict(n.entitlement_gpu_hours),
            source=n.source,
        )
        if n.parent is not None:
            g.add_edge(n.parent, n.name, share=n.share)
    return g
