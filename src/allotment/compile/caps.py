"""The ``max_gpus`` cap on what a budget node is owed: one owner, here, for every later layer.

A node with ``max_gpus`` may never run more than that many GPUs at once, so it cannot be owed
more either: its ``entitlement_gpus`` on each cluster is its share of the cluster capped by the
tightest ``max_gpus`` on its path (its own and its ancestors'), and its ``entitlement_gpu_hours``
shrinks with it.  The rest of the cluster goes to the others by fair share (docs/concepts.md).
The scheduler (``core/context.py``), ``allot compile`` and the plan comment all read the capped
figure from the compiled node, so the three agree (issue 26: red-team was shown 53.76 GPUs on
h100 by the compiler and the plan while the scheduler owed it 32).

``absolute`` (the share) stays uncapped: it is a fraction of the cluster as written, which is
what the split among siblings and the generated workloads are sized from.
"""

from __future__ import annotations

from allotment.compile.model import Cluster
from allotment.config.loaded import LoadedNode


def path_caps(nodes: tuple[LoadedNode, ...]) -> dict[str, int | None]:
    """The tightest ``max_gpus`` on each node's path from the root (``nodes`` in pre-order)."""
    out: dict[str, int | None] = {}
    for n in nodes:
        own = n.terms.max_gpus if n.terms is not None else None
        above = out.get(n.parent) if n.parent is not None else None
        caps = [c for c in (own, above) if c is not None]
        out[n.name] = min(caps) if caps else None
    return out


def entitlement_gpus(absolute: float, cluster: Cluster, cap: int | None) -> float:
    """GPUs owed on ``cluster``: the share's GPUs, at most ``cap``."""
    gpus = absolute * cluster.gpus
    return gpus if cap is None else min(gpus, float(cap))


def entitlement_gpu_hours(absolute: float, cluster: Cluster, cap: int | None) -> float:
    """Reference GPU-hours per lookback window of what is owed on ``cluster``: the share's, or
    the cap's when it binds (an uncapped node's value is the very float it always was)."""
    uncapped = absolute * cluster.reference_gpu_hours_per_window
    owed = entitlement_gpus(absolute, cluster, cap)
    if owed == absolute * cluster.gpus:
        return uncapped
    return owed * cluster.reference_gpu_hours_per_window / cluster.gpus
