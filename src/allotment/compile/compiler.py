"""``compile_config``: a checked ``LoadedConfig`` and a date in, a ``CompiledConfig`` out.

Pure: the date is an argument (the CLI passes today's), nothing is read from a clock or disk.
``compile_repo`` is the convenience that reads, loads and compiles a folder.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from allotment.compile.caps import entitlement_gpu_hours, entitlement_gpus, path_caps
from allotment.compile.model import (
    BudgetNode,
    Cluster,
    CompiledConfig,
    GpuType,
    Maintenance,
    NodeGroup,
    Policy,
    UserInfo,
)
from allotment.compile.policy import resolve_policies
from allotment.compile.shares import compute_shares
from allotment.config.bulk import bulk_allocation
from allotment.config.files import read_repo_files
from allotment.config.loaded import LoadedCluster, LoadedConfig
from allotment.config.loader import load_config
from allotment.errors import Diagnostic


def _cluster(lc: LoadedCluster, gpu_types: dict[str, GpuType], policy: Policy) -> Cluster:
    groups = tuple(NodeGroup(g.name, g.gpu_type, g.gpus_per_node, g.node_names) for g in lc.groups)
    gpus = sum(len(g.node_names) * g.gpus_per_node for g in groups)
    weighted = sum(
        len(g.node_names) * g.gpus_per_node * gpu_types[g.gpu_type].billing_weight for g in groups
    )
    maintenance = tuple(
        Maintenance(m.nodes, m.entry.start, m.entry.end, m.entry.reason) for m in lc.maintenance
    )
    return Cluster(
        name=lc.name,
        node_groups=groups,
        maintenance=maintenance,
        gpus=gpus,
        reference_gpu_hours_per_window=weighted * policy.lookback_s / 3600.0,
        health_file=lc.model.health_file,
        health_command=lc.model.health_command,
    )


def compile_config(
    loaded: LoadedConfig, at: dt.date, revision: str | None = None
) -> CompiledConfig:
    """Shares, entitlements and resolved policies of ``loaded`` at date ``at``."""
    with bulk_allocation():
        return _compile(loaded, at, revision)


def _compile(loaded: LoadedConfig, at: dt.date, revision: str | None) -> CompiledConfig:
    warnings: list[Diagnostic] = list(loaded.warnings)
    gpu_types = {n: GpuType(n, e.billing_weight) for n, e in loaded.gpu_types.items()}
    cluster_names = tuple(loaded.clusters)
    policy, cluster_policies = resolve_policies(loaded.scheduler, loaded.boosts, cluster_names)
    clusters = {
        n: _cluster(lc, gpu_types, cluster_policies[n]) for n, lc in loaded.clusters.items()
    }
    shares = compute_shares(loaded.nodes, at, cluster_names)
    caps = path_caps(loaded.nodes)  # max_gpus is applied here, for every later layer
    nodes = []
    for ln in loaded.nodes:
        s = shares[ln.name]
        t = ln.terms
        if t is not None and t.end is not None and t.end < at and ln.terms_at is not None:
            warnings.append(
                ln.terms_at.diagnostic(
                    f"budget '{ln.name}' ended on {t.end}; it gets no share", "warning"
                )
            )
        nodes.append(
            BudgetNode(
                name=ln.name,
                path=ln.path,
                parent=ln.parent,
                owners=ln.owners,
                leaf=ln.leaf,
                weight=t.share if t is not None else 1.0,
                share=s.share,
                active=s.active,
                clusters=ln.clusters,
                max_gpus=t.max_gpus if t is not None else None,
                members=ln.members,
                absolute=dict(s.absolute),
                entitlement_gpus={
                    c: entitlement_gpus(s.absolute[c], clusters[c], caps[ln.name])
                    for c in cluster_names
                },
                entitlement_gpu_hours={
                    c: entitlement_gpu_hours(s.absolute[c], clusters[c], caps[ln.name])
                    for c in cluster_names
                },
                source=ln.source,
                start=t.start if t is not None else None,
                end=t.end if t is not None else None,
            )
        )
    root = shares.get(loaded.root)
    for c, lc in loaded.clusters.items():
        if root is not None and root.absolute[c] == 0.0:
            warnings.append(
                Diagnostic(lc.source, 1, 1, f"no active budget can use cluster '{c}'", "warning")
            )
    for b, where in zip(loaded.boosts.boosts, loaded.boosts_at, strict=True):
        if b.expires.date() < at:
            warnings.append(
                where.diagnostic(f"boost for {b.target} expired on {b.expires.date()}", "warning")
            )
    users = {u.name: UserInfo(u.name, u.accounts, u.default_account) for u in loaded.users.values()}
    return CompiledConfig(
        inputs_sha256=loaded.inputs_sha256,
        revision=revision,
        at=at,
        clusters=clusters,
        gpu_types=gpu_types,
        nodes=tuple(nodes),
        users=users,
        policy=policy,
        cluster_policies=cluster_policies,
        root=loaded.root,
        warnings=tuple(sorted(set(warnings))),
    )


def compile_repo(root: Path, at: dt.date, revision: str | None = None) -> CompiledConfig:
    """Read, load and compile the config repository at ``root``."""
    return compile_config(load_config(read_repo_files(root), at), at, revision)
