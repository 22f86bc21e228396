"""Cross-checks on the hardware: GPU types exist, node names expand and are unique, maintenance
names real nodes over a real interval."""

from __future__ import annotations

from collections.abc import Mapping

from allotment.config.hostlist import expand_hostlist, numbered_names
from allotment.config.loaded import LoadedCluster, LoadedGroup, LoadedMaintenance, Where
from allotment.config.models.inventory import ClusterFile, GpuTypeEntry
from allotment.config.sourcemap import SourceMap
from allotment.config.target_names import target_name_problem
from allotment.errors import Diagnostic


def _at(smap: SourceMap, *path: str | int) -> Where:
    line, col = smap.value(path)
    return Where(smap.file, line, col)


def check_cluster(
    name: str, model: ClusterFile, smap: SourceMap, gpu_types: Mapping[str, GpuTypeEntry] | None
) -> tuple[LoadedCluster | None, list[Diagnostic]]:
    """``gpu_types`` None means the GPU types file itself is broken: skip that check."""
    diags: list[Diagnostic] = []
    groups: list[LoadedGroup] = []
    seen_nodes: dict[str, str] = {}
    seen_groups: set[str] = set()
    for i, g in enumerate(model.node_groups):
        if g.name in seen_groups:
            diags.append(
                _at(smap, "node_groups", i, "name").diagnostic(f"duplicate node group '{g.name}'")
            )
        seen_groups.add(g.name)
        if gpu_types is not None and g.gpu_type not in gpu_types:
            diags.append(
                _at(smap, "node_groups", i, "gpu_type").diagnostic(
                    f"unknown GPU type '{g.gpu_type}' (known: {', '.join(sorted(gpu_types))})"
                )
            )
        problem = target_name_problem(g.gpu_type.lower())  # kueue's resource flavor name
        if problem is not None:
            diags.append(_at(smap, "node_groups", i, "gpu_type").diagnostic(f"GPU type {problem}"))
        names: tuple[str, ...] = ()
        if (g.nodes is None) == (g.prefix is None):
            diags.append(
                _at(smap, "node_groups", i).diagnostic(
                    "give either 'nodes' (a hostlist) or 'prefix' with 'count'"
                )
            )
        elif g.nodes is not None:
            try:
                names = expand_hostlist(g.nodes)
            except ValueError as exc:
                diags.append(_at(smap, "node_groups", i, "nodes").diagnostic(str(exc)))
            if names and g.count is not None and g.count != len(names):
                diags.append(
                    _at(smap, "node_groups", i, "count").diagnostic(
                        f"count {g.count} does not match the {len(names)} nodes listed"
                    )
                )
        elif g.prefix is not None:
            if g.count is None:
                diags.append(_at(smap, "node_groups", i).diagnostic("'prefix' needs 'count'"))
            else:
                names = numbered_names(g.prefix, g.count, g.digits, g.first_index)
        for n in names:
            if n in seen_nodes:
                diags.append(
                    _at(smap, "node_groups", i).diagnostic(
                        f"node '{n}' is also in node group '{seen_nodes[n]}'"
                    )
                )
                break
            seen_nodes[n] = g.name
        groups.append(LoadedGroup(g.name, g.gpu_type, g.gpus_per_node, names))
    maint: list[LoadedMaintenance] = []
    for i, m in enumerate(model.maintenance):
        if m.end <= m.start:
            diags.append(
                _at(smap, "maintenance", i, "end").diagnostic(
                    f"maintenance ends ({m.end.isoformat()}) before it starts"
                )
            )
        nodes: list[str] = []
        for j, expr in enumerate(m.nodes):
            try:
                listed = expand_hostlist(expr)
            except ValueError as exc:
                diags.append(_at(smap, "maintenance", i, "nodes", j).diagnostic(str(exc)))
                continue
            unknown = [n for n in listed if n not in seen_nodes]
            if unknown:
                diags.append(
                    _at(smap, "maintenance", i, "nodes", j).diagnostic(
                        f"unknown node '{unknown[0]}' in cluster '{name}'"
                    )
                )
            nodes.extend(n for n in listed if n in seen_nodes)
        maint.append(LoadedMaintenance(m, tuple(dict.fromkeys(nodes))))
    if diags:
        return None, diags
    return LoadedCluster(name, smap.file, model, tuple(groups), tuple(maint)), []
