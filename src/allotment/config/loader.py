"""``load_config``: from a mapping of repo-relative paths to bytes, to a checked ``LoadedConfig``.

Takes a mapping, not a folder, because ``allot plan`` reads the same files out of git objects.
Every file is read and checked even after the first problem, so a user sees every error at once;
only checks whose inputs are broken are skipped (an unknown-cluster error is not reported when the
cluster file itself failed to parse).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from allotment.config.boost_checks import check_boosts
from allotment.config.bulk import bulk_allocation
from allotment.config.files import check_file
from allotment.config.inventory_checks import check_cluster
from allotment.config.kinds import UNKNOWN_FILE_HINT, kind_of, read_model
from allotment.config.loaded import LoadedCluster, LoadedConfig, Located
from allotment.config.models.budget import BudgetFile
from allotment.config.models.common import NAME_PATTERN
from allotment.config.models.inventory import ClusterFile
from allotment.config.models.policy import BoostsFile, SchedulerFile
from allotment.config.policy_checks import check_scheduler
from allotment.config.sourcemap import SourceMap
from allotment.config.tree import build_tree
from allotment.errors import ConfigError, Diagnostic

GPU_TYPES = "inventory/gpu_types.yaml"
SCHEDULER = "policies/scheduler.yaml"
BOOSTS = "policies/boosts.yaml"


def inputs_sha256(files: Mapping[str, bytes]) -> str:
    """sha256 over the sorted (path, bytes) pairs, each length-prefixed so that no two different
    sets of files can produce the same byte stream.  Disk and git give the same hash."""
    h = hashlib.sha256()
    for path in sorted(files):
        p = path.encode("utf-8")
        data = files[path]
        h.update(len(p).to_bytes(8, "big") + p + len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def load_config(files: Mapping[str, bytes], at: dt.date | None = None) -> LoadedConfig:
    """Validate every file and the whole; raise ConfigError with every error (and warning).
    ``at``: the date the config is checked for, which bounds how far a boost may run
    (``boost_checks``); None skips only that date-dependent check."""
    with bulk_allocation():
        return _load(files, at)


def _load(files: Mapping[str, bytes], at: dt.date | None) -> LoadedConfig:
    diags: list[Diagnostic] = []
    parsed: dict[str, tuple[Any, SourceMap]] = {}
    kinds: dict[str, str] = {}
    for path in sorted(files):
        data = files[path]
        problems = check_file(path, data)
        if problems:
            diags.extend(problems)
            continue
        kind = kind_of(path)
        if kind is None:
            diags.append(Diagnostic(path, 0, 0, f"unknown config file; {UNKNOWN_FILE_HINT}"))
            continue
        kinds[path] = kind
        model, smap, problems = read_model(path, data, kind)
        diags.extend(problems)
        if model is not None:
            parsed[path] = (model, smap)

    # Inventory first: the budget tree refers to clusters.
    gpu_types = None
    if GPU_TYPES in parsed:
        gpu_types = dict(sorted(parsed[GPU_TYPES][0].gpu_types.items()))
    elif GPU_TYPES not in files:
        diags.append(Diagnostic(GPU_TYPES, 0, 0, "missing: the GPU types file is required"))
    cluster_paths = sorted(p for p, k in kinds.items() if k == "cluster")
    cluster_names = tuple(p.rsplit("/", 1)[1].removesuffix(".yaml") for p in cluster_paths)
    if not cluster_paths:
        diags.append(
            Diagnostic(
                "inventory/clusters", 0, 0, "no clusters: add inventory/clusters/<name>.yaml"
            )
        )
    clusters: dict[str, LoadedCluster] = {}
    for path, name in zip(cluster_paths, cluster_names, strict=True):
        if not re.match(NAME_PATTERN, name):
            diags.append(Diagnostic(path, 0, 0, f"cluster file name {name!r} is not a valid name"))
            continue
        if path not in parsed:
            continue
        model, smap = parsed[path]
        assert isinstance(model, ClusterFile)
        cluster, problems = check_cluster(name, model, smap, gpu_types)
        diags.extend(problems)
        if cluster is not None:
            clusters[name] = cluster

    budgets = {p: (m, s) for p, (m, s) in parsed.items() if isinstance(m, BudgetFile)}
    all_budget_files = {p for p, k in kinds.items() if k == "budget"}
    nodes, root, problems, users = build_tree(budgets, all_budget_files, cluster_names)
    diags.extend(problems)
    if len(nodes) != len(all_budget_files) and not any(d.severity == "error" for d in diags):
        diags.append(Diagnostic("budgets", 0, 0, "some budget files are not part of the tree"))

    scheduler = SchedulerFile()
    scheduler_smap = None
    if SCHEDULER in parsed:
        scheduler, scheduler_smap = parsed[SCHEDULER]
        node_names = {n: tuple(sorted(x for g in c.groups for x in g.node_names)) for n, c in clusters.items()}
        diags.extend(check_scheduler(scheduler, scheduler_smap, cluster_names, node_names))
    boosts = BoostsFile()
    boosts_at: tuple[Located, ...] = ()
    # When the tree (or the platform team's file) is broken, target and approver errors would
    # only be noise; the expiry bound is still checked.
    tree_ok = not any(d.severity == "error" and d.file.startswith("budgets") for d in diags)
    owners_known = tree_ok and (SCHEDULER in parsed or SCHEDULER not in files)
    if BOOSTS in parsed:
        boosts, bsmap = parsed[BOOSTS]
        boosts_at = tuple(Located(bsmap, ("boosts", i)) for i in range(len(boosts.boosts)))
        owners = (nodes, users, scheduler.platform_team) if owners_known else None
        diags.extend(check_boosts(boosts, bsmap, owners, scheduler.boost_max, at))

    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise ConfigError(diags)
    assert isinstance(scheduler, SchedulerFile) and gpu_types is not None
    return LoadedConfig(
        inputs_sha256=inputs_sha256(files),
        root=root,
        nodes=nodes,
        gpu_types=gpu_types,
        clusters=dict(sorted(clusters.items())),
        users=users,
        scheduler=scheduler,
        scheduler_source=SCHEDULER if SCHEDULER in files else None,
        boosts=boosts,
        boosts_at=boosts_at,
        warnings=tuple(sorted(d for d in diags if d.severity == "warning")),
    )
