"""Text tables for the terminal views (``allot status`` tree, ``allot usage``)."""

from __future__ import annotations

import datetime as dt

from allotment.legible.runview import ClusterView
from allotment.legible.words import clock, gpu_hours, percent


def tree_table(view: ClusterView, t0: dt.datetime) -> str:
    when = clock(t0, view.t)
    lines = [
        f"cluster {view.cluster} at {when}: {view.running_gpus} of {view.capacity_gpus} GPUs busy "
        f"({percent(view.occupancy)}), {view.pending_gpus} GPUs pending",
        "",
        f"{'budget node':<30} {'entitled':>9} {'used':>12} {'owed':>12} {'ratio':>6} {'rank':>5} "
        f"{'running':>8} {'alloc':>6} {'unalloc':>7} {'pending':>8}",
    ]
    for r in view.tree:
        name = "  " * r.depth + r.name
        lines.append(
            f"{name:<30} {r.entitlement_gpus:>9.1f} {gpu_hours(r.usage_gpu_hours):>12} "
            f"{gpu_hours(r.owed_gpu_hours):>12} {percent(r.ratio):>6} {f'{r.rank}/{r.siblings}':>5} "
            f"{r.running_gpus:>8} {r.running_allocated_gpus:>6} {r.running_unallocated_gpus:>7} {r.pending_gpus:>8}"
        )
    lines.append("")
    if not view.drained:
        lines.append("drained or unhealthy nodes: none")
    for d in view.drained:
        still = ", ".join(d.jobs) if d.jobs else "nothing"
        lines.append(f"drained: {d.node} since {clock(t0, d.since)}; still on it: {still}")
    lines.append("")
    lines.append("entitled: GPUs owed (share of the cluster); used/owed: GPU-hours over the window; "
                 "rank: among siblings, 1 = most under-served, served first")
    return "\n".join(lines) + "\n"
