"""``--repo-out DIR``: a config repository that fits an imported trace, so it simulates as is.

Written in the config layout (docs/config-reference.md): ``inventory/gpu_types.yaml``,
``inventory/clusters/<cluster>.yaml``, ``budgets/<org>/budget.yaml`` with one child per account
found in the trace (each a leaf folder listing its users) and ``policies/scheduler.yaml``.

* Shares: proportional to each account's GPU-hours in the trace (``usage``) or all equal.
* Cluster size, first that applies: ``--gpus N`` (with ``--gpus-per-node M``); the source's own
  node list or machine header; else the trace's peak demand (offered load if nobody waited),
  rounded up to whole nodes.  With ``--gpus`` and typed jobs, nodes are split among the GPU
  types in proportion to their GPU-hours.
* Everything is rendered first (pure), then written to a temporary folder, loaded back and
  compiled with the real config compiler, and only then moved to DIR, so a failure leaves
  nothing behind.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import secrets
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from allotment.compile.compiler import compile_repo
from allotment.errors import UsageError
from allotment.traces.importers.base import NodeGroupShape
from allotment.traces.summary import ImportResult

SharesMode = Literal["usage", "equal"]
DEFAULT_GPUS_PER_NODE = 8


@dataclass(frozen=True, slots=True)
class RepoOutOptions:
    shares: SharesMode = "usage"
    gpus: int | None = None
    gpus_per_node: int | None = None
    cluster: str = "imported"
    org: str = "imported"
    owner: str = "platform@example.com"
    default_gpu_type: str = "gpu"


def _dump(comment: str, value: Any) -> str:
    body = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return f"# {comment}\n{body}"


def _split_nodes(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Largest-remainder split of ``total`` nodes, at least one per type (stable by name)."""
    names = sorted(weights)
    if total < len(names):
        raise UsageError(
            f"{total} node(s) cannot hold the {len(names)} GPU types the trace names "
            f"({', '.join(names)}); pass a larger --gpus"
        )
    spare = total - len(names)
    whole = sum(weights.values()) or 1.0
    raw = {n: spare * weights[n] / whole for n in names}
    out = {n: 1 + math.floor(raw[n]) for n in names}
    left = total - sum(out.values())
    for n in sorted(names, key=lambda n: (-(raw[n] - math.floor(raw[n])), n))[:left]:
        out[n] += 1
    return out


def cluster_shape(
    result: ImportResult, opts: RepoOutOptions
) -> tuple[tuple[NodeGroupShape, ...], str]:
    """The node groups to write, and a phrase saying where their size came from."""
    s = result.stats
    gpn = opts.gpus_per_node or max(DEFAULT_GPUS_PER_NODE, s.max_gpus_per_node)
    types = dict(s.gpu_type_gpu_seconds)
    if opts.gpus is not None:
        nodes = max(1, math.ceil(opts.gpus / gpn))
        if not types:
            return (NodeGroupShape(opts.default_gpu_type, gpn, nodes),), f"--gpus {opts.gpus}"
        split = _split_nodes(nodes, types)
        return tuple(
            NodeGroupShape(t, gpn, n) for t, n in sorted(split.items())
        ), f"--gpus {opts.gpus}"
    if result.cluster:
        return result.cluster, result.cluster_source
    nodes = max(1, math.ceil(s.peak_demand_gpus / gpn))
    source = f"peak demand {s.peak_demand_gpus} GPUs"
    if not types:
        return (NodeGroupShape(opts.default_gpu_type, gpn, nodes),), source
    split = _split_nodes(max(nodes, len(types)), types)
    return tuple(NodeGroupShape(t, gpn, n) for t, n in sorted(split.items())), source


def _check_fits(result: ImportResult, groups: tuple[NodeGroupShape, ...]) -> None:
    s = result.stats
    total = sum(g.gpus_per_node * g.count for g in groups)
    if s.max_job_gpus > total:
        raise UsageError(
            f"the trace has a {s.max_job_gpus}-GPU job but the cluster would have {total} GPUs; "
            "pass a larger --gpus"
        )
    widest = max(g.gpus_per_node for g in groups)
    if s.max_gpus_per_node > widest:
        raise UsageError(
            f"the trace has a job needing {s.max_gpus_per_node} GPUs on one node but nodes have "
            f"{widest}; pass --gpus-per-node {s.max_gpus_per_node}"
        )
    missing = sorted(set(s.gpu_type_gpu_seconds) - {g.gpu_type for g in groups})
    if missing:
        raise UsageError(f"jobs ask for GPU types the cluster lacks: {', '.join(missing)}")
    for t, per_node in sorted(s.gpu_type_max_gpus_per_node.items()):
        widest_of_type = max(g.gpus_per_node for g in groups if g.gpu_type == t)
        if per_node > widest_of_type:
            raise UsageError(
                f"the trace has a {t} job needing {per_node} GPUs on one node but {t} nodes "
                f"have at most {widest_of_type}"
            )
    for t, need in sorted(s.gpu_type_max_job_gpus.items()):
        have = sum(g.gpus_per_node * g.count for g in groups if g.gpu_type == t)
        if need > have:
            raise UsageError(
                f"the trace has a {need}-GPU {t} job but the cluster would have {have} {t} GPUs; "
                "pass a larger --gpus"
            )


def render_repo(result: ImportResult, opts: RepoOutOptions) -> dict[str, str]:
    """Repo-relative path -> file text.  Pure: the same import gives the same bytes."""
    s = result.stats
    if not s.account_gpu_seconds:
        raise UsageError("--repo-out: the trace has no jobs, so no budget tree to write")
    groups, size_source = cluster_shape(result, opts)
    _check_fits(result, groups)
    accounts = sorted(s.account_gpu_seconds)
    source = Path(result.source).name  # not the local path: the same trace gives the same files
    org = opts.org
    while org in accounts:
        org = f"{org}-org"
    files: dict[str, str] = {}
    gpu_types = sorted({g.gpu_type for g in groups})
    files["inventory/gpu_types.yaml"] = _dump(
        f"GPU types of the imported trace {source}; one hour of each is charged as one.",
        {"gpu_types": {t: {"billing_weight": 1.0} for t in gpu_types}},
    )
    node_groups = []
    for i, g in enumerate(groups):
        name = (
            g.gpu_type
            if len({x.gpu_type for x in groups}) == len(groups)
            else f"{g.gpu_type}-{g.gpus_per_node}"
        )
        node_groups.append(
            {
                "name": name,
                "gpu_type": g.gpu_type,
                "gpus_per_node": g.gpus_per_node,
                "count": g.count,
                "prefix": f"{opts.cluster}-g{i}-n" if len(groups) > 1 else f"{opts.cluster}-n",
                "digits": max(3, len(str(g.count))),
            }
        )
    total = sum(g.gpus_per_node * g.count for g in groups)
    files[f"inventory/clusters/{opts.cluster}.yaml"] = _dump(
        f"{total} GPUs sized from {size_source} (allot trace import --repo-out).",
        {"description": f"Cluster for replaying {source}", "node_groups": node_groups},
    )
    whole = sum(s.account_gpu_seconds.values())
    children: dict[str, dict[str, float]] = {}
    for a in accounts:
        share = (
            1.0
            if opts.shares == "equal"
            else max(round(100 * s.account_gpu_seconds[a] / whole, 4), 0.0001)
        )
        children[a] = {"share": share}
    how = "proportional to its GPU-hours in the trace" if opts.shares == "usage" else "equal"
    files[f"budgets/{org}/budget.yaml"] = _dump(
        f"Budget root for {source}; each child is one account of the trace, share {how}.",
        {
            "owners": [opts.owner],
            "description": f"Imported from {source}",
            "children": children,
        },
    )
    members: dict[str, list[str]] = defaultdict(list)
    best: dict[str, tuple[float, str]] = {}
    for (user, account), gs in sorted(s.user_account_gpu_seconds.items()):
        members[account].append(user)
        if user not in best or gs > best[user][0]:
            best[user] = (gs, account)
    leaves_of: dict[str, int] = defaultdict(int)
    for user, _ in s.user_account_gpu_seconds:
        leaves_of[user] += 1
    for a in accounts:
        doc: dict[str, Any] = {"owners": [opts.owner], "members": sorted(members.get(a, []))}
        defaults = sorted(u for u in doc["members"] if leaves_of[u] > 1 and best[u][1] == a)
        if defaults:
            doc["default_for"] = defaults
        hours = s.account_gpu_seconds[a] / 3600
        files[f"budgets/{org}/{a}/budget.yaml"] = _dump(
            f"Account '{a}': {s.account_jobs[a]} jobs, {hours:,.1f} GPU-hours in the trace.", doc
        )
    files["policies/scheduler.yaml"] = _dump(
        "Scheduler knobs: unset knobs take the built-in defaults (docs/config-reference.md).",
        {"platform_team": [opts.owner]},
    )
    return dict(sorted(files.items()))


def write_repo(
    target: str | Path, files: dict[str, str], *, at: dt.date, commit: bool = True
) -> Path:
    """Write ``files`` into a temporary folder next to ``target``, compile it, then move it.

    Returns the temporary folder when ``commit`` is False (the caller moves it with
    :func:`commit_repo`, so a trace and its repository can land together)."""
    dest = Path(target)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"--repo-out {target}: exists and is not an empty folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.tmp")
    tmp.mkdir()  # not mkdtemp: the result keeps the user's umask
    try:
        for rel, text in files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        compile_repo(tmp, at)  # what we write must load and compile, or nothing is written
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if commit:
        commit_repo(tmp, dest)
    return tmp


def commit_repo(tmp: Path, dest: Path) -> None:
    if dest.exists():
        dest.rmdir()  # empty, checked above
    os.replace(tmp, dest)


def discard_repo(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
