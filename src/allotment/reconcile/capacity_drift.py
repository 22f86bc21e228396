"""Capacity drift: the cluster the backend reports against the one the inventory describes.

The core divides the inventory's GPUs among the budget tree; when the cluster has more or fewer
(nodes added or removed by hand, an inventory change merged before the hardware moved, a node
whose GPUs the backend no longer sees), entitlements and "N of M GPUs busy" are computed on a
cluster that does not exist.  Nothing is corrected (the inventory is the platform team's to
change): the difference is reported as a ``CapacityDrift`` condition, a metric and a line on the
live page, every tick that observes the cluster.

Compared per node name: a node of the inventory the backend does not report is *missing*; a
node the backend reports with GPUs that the inventory does not name is *extra* (a node with no
GPUs, like a Kubernetes control-plane node, is not GPU capacity and is ignored); a node in both
with a different GPU count *differs*.  A drained or down node is present: that is health, not
drift.  Pure: ``compare`` reads its two arguments only.  Nodes are listed in the inventory's
order (its host lists' order: n2 before n10), extra ones in the backend's.
"""

from __future__ import annotations

from dataclasses import dataclass

from allotment.backends.protocol import Observation
from allotment.compile.model import Cluster

SHOWN = 8  # node names listed in a message before "and N more"


@dataclass(frozen=True, slots=True)
class GpuCountDiff:
    node: str
    inventory_gpus: int
    observed_gpus: int


@dataclass(frozen=True, slots=True)
class CapacityDrift:
    inventory_gpus: int
    observed_gpus: int
    inventory_nodes: int
    observed_nodes: int
    missing: tuple[str, ...]  # in the inventory, not reported by the backend
    extra: tuple[str, ...]  # reported with GPUs, not in the inventory
    differs: tuple[GpuCountDiff, ...]  # in both, GPU counts differ

    @property
    def drifted(self) -> bool:
        return bool(self.missing or self.extra or self.differs)

    def message(self) -> str:
        head = (
            f"inventory {self.inventory_gpus} GPUs on {self.inventory_nodes} nodes,"
            f" cluster {self.observed_gpus} GPUs on {self.observed_nodes} nodes"
        )
        if not self.drifted:
            return head
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} node(s) missing from the cluster: {_names(self.missing)}")
        if self.extra:
            parts.append(f"{len(self.extra)} node(s) not in the inventory: {_names(self.extra)}")
        if self.differs:
            shown = ", ".join(
                f"{d.node} {d.observed_gpus} (inventory {d.inventory_gpus})" for d in self.differs[:SHOWN]
            )
            more = f" and {len(self.differs) - SHOWN} more" if len(self.differs) > SHOWN else ""
            parts.append(f"{len(self.differs)} node(s) with other GPU counts: {shown}{more}")
        return f"{head}: " + "; ".join(parts)


def compare(cluster: Cluster, obs: Observation) -> CapacityDrift:
    want = {n: g.gpus_per_node for g in cluster.node_groups for n in g.node_names}
    seen = {n.name: n.gpus for n in obs.nodes if n.name in want or n.gpus > 0}
    return CapacityDrift(
        inventory_gpus=sum(want.values()),
        observed_gpus=sum(seen.values()),
        inventory_nodes=len(want),
        observed_nodes=len(seen),
        missing=tuple(n for n in want if n not in seen),
        extra=tuple(n for n in seen if n not in want),
        differs=tuple(GpuCountDiff(n, g, seen[n]) for n, g in want.items() if n in seen and seen[n] != g),
    )


def _names(names: tuple[str, ...]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more
