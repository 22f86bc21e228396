"""A CompiledConfig as JSON (for tools; deterministic: sorted keys, stable order, rounded floats)
or as a table (for people: tree indentation, percentages, GPUs)."""

from __future__ import annotations

import json
from typing import Any

from allotment.compile.model import BudgetNode, Cluster, CompiledConfig, Policy

_DIGITS = 10  # enough for any share; hides last-bit float noise between platforms


def _r(x: float) -> float:
    return round(x, _DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


def _node(n: BudgetNode) -> dict[str, Any]:
    return {
        "name": n.name,
        "path": n.path,
        "parent": n.parent,
        "owners": list(n.owners),
        "leaf": n.leaf,
        "weight": n.weight,
        "share": _r(n.share),
        "active": n.active,
        "clusters": list(n.clusters),
        "max_gpus": n.max_gpus,
        "members": list(n.members),
        "start": n.start.isoformat() if n.start else None,
        "end": n.end.isoformat() if n.end else None,
        "source": n.source,
        "absolute": {c: _r(v) for c, v in n.absolute.items()},
        "entitlement_gpus": {c: _r(v) for c, v in n.entitlement_gpus.items()},
        "entitlement_gpu_hours": {c: _r(v) for c, v in n.entitlement_gpu_hours.items()},
    }


def _cluster(c: Cluster, p: Policy) -> dict[str, Any]:
    return {
        "gpus": c.gpus,
        "reference_gpu_hours_per_window": _r(c.reference_gpu_hours_per_window),
        "lookback_s": p.lookback_s,
        "nodes": len(c.node_names),
        "node_groups": [
            {
                "name": g.name,
                "gpu_type": g.gpu_type,
                "gpus_per_node": g.gpus_per_node,
                "count": len(g.node_names),
                "first": g.node_names[0] if g.node_names else None,
                "last": g.node_names[-1] if g.node_names else None,
            }
            for g in c.node_groups
        ],
        "maintenance": [
            {
                "nodes": list(m.nodes),
                "start": m.start.isoformat(),
                "end": m.end.isoformat(),
                "reason": m.reason,
            }
            for m in c.maintenance
        ],
    }


def to_dict(config: CompiledConfig) -> dict[str, Any]:
    return {
        "inputs_sha256": config.inputs_sha256,
        "revision": config.revision,
        "at": config.at.isoformat(),
        "root": config.root,
        "gpu_types": {n: {"billing_weight": t.billing_weight} for n, t in config.gpu_types.items()},
        "clusters": {n: _cluster(c, config.policy_for(n)) for n, c in config.clusters.items()},
        "nodes": [_node(n) for n in config.nodes],
        "users": {
            u.name: {"accounts": list(u.accounts), "default_account": u.default_account}
            for u in config.users.values()
        },
    }


def to_json(config: CompiledConfig) -> str:
    return json.dumps(to_dict(config), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if x else "-"


def to_table(config: CompiledConfig) -> str:
    clusters = list(config.clusters)
    depth = {config.root: 0}
    for n in config.nodes:
        if n.parent is not None:
            depth[n.name] = depth[n.parent] + 1
    head = ["BUDGET", "SHARE"]
    for c in clusters:
        head += [f"{c} %", f"{c} GPUs"]
    head += ["NOTES"]
    rows = [head]
    for n in config.nodes:
        row = ["  " * depth[n.name] + n.name, _pct(n.share) if n.parent else ""]
        for c in clusters:
            row += [_pct(n.absolute[c]), f"{n.entitlement_gpus[c]:.1f}" if n.absolute[c] else "-"]
        notes = []
        if not n.active:
            notes.append("inactive")
        if n.parent and len(n.clusters) < len(clusters):
            notes.append("only " + ",".join(n.clusters))
        if n.max_gpus is not None:
            notes.append(f"max {n.max_gpus} GPUs")
        if n.start is not None:
            notes.append(f"from {n.start}")
        if n.end is not None:
            notes.append(f"until {n.end}")
        if n.leaf:
            notes.append(f"{len(n.members)} member" + ("" if len(n.members) == 1 else "s"))
        row.append("; ".join(notes))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            v.rjust(w) for v, w in zip(r[1:-1], widths[1:-1], strict=True)
        ]
        lines.append("  ".join([*cells, r[-1]]).rstrip())
    caps = ", ".join(
        f"{n} {c.gpus} GPUs ({c.reference_gpu_hours_per_window:,.0f} ref GPU-h / "
        f"{config.policy_for(n).lookback_s // 86400}d)"
        if config.policy_for(n).lookback_s % 86400 == 0
        else f"{n} {c.gpus} GPUs ({c.reference_gpu_hours_per_window:,.0f} ref GPU-h / window)"
        for n, c in config.clusters.items()
    )
    title = (
        f"Budget tree '{config.root}' at {config.at.isoformat()}: {caps}; "
        f"{len(config.users)} users; inputs {config.inputs_sha256[:12]}"
    )
    return "\n".join([title, "", *lines]) + "\n"
