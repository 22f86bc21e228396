"""``allot status --run DIR``: the budget tree, occupancy and drained nodes of a saved run at a
moment, from its Fair Tree snapshot (usage, shares) and its event log (who runs where)."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import Any

from allotment.legible.replay import Moment, gpus_by_account, moment
from allotment.legible.rundir import RunDir
from allotment.legible.tree import (
    TreeInputs,
    TreeRow,
    build_tree,
    compiled_entitlements,
    compiled_parents,
)
from allotment.timefmt import rfc3339


@dataclass(frozen=True, slots=True)
class DrainedNode:
    node: str
    since: float
    jobs: tuple[str, ...]  # still running there


@dataclass(frozen=True, slots=True)
class ClusterView:
    cluster: str
    t: float
    capacity_gpus: int
    running_gpus: int
    pending_gpus: int
    tree: tuple[TreeRow, ...]
    drained: tuple[DrainedNode, ...]

    @property
    def occupancy(self) -> float:
        return self.running_gpus / self.capacity_gpus if self.capacity_gpus else 0.0

    def to_json(self, t0: dt.datetime | None = None) -> dict[str, Any]:
        """For a machine: wall-clock times RFC 3339 UTC (``time``, each drained node's ``since``).
        A saved run's view (``t0`` its start) keeps its run-relative seconds beside them, as
        ``t_s`` and ``since_t_s``; a live view's ``t`` is Unix seconds, so ``time`` says it all."""
        d = asdict(self)
        origin = t0 if t0 is not None else dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

        def when(t: float) -> str:
            return rfc3339((origin + dt.timedelta(seconds=t)).timestamp())

        d["time"] = when(self.t)
        del d["t"]
        if t0 is not None:
            d["t_s"] = self.t
        for row, node in zip(d["drained"], self.drained, strict=True):
            row["since"] = when(node.since)
            if t0 is not None:
                row["since_t_s"] = node.since
        d["occupancy"] = round(self.occupancy, 4)
        return d


def window_s(compiled: dict[str, Any] | Any, cluster: str) -> float:
    return float(compiled.get("clusters", {}).get(cluster, {}).get("lookback_s", 7 * 86400))


def run_tree_inputs(run: RunDir, m: Moment) -> TreeInputs:
    snap = run.snapshot_at(m.t)
    parents = compiled_parents(run.compiled)
    shares = {n.node: n.share for n in snap.nodes} if snap else {}
    parents = {n: p for n, p in parents.items() if n in shares} if shares else parents
    running = list(m.running.values())
    pend: dict[str, int] = {}
    for j in m.pending:
        spec = run.jobs.get(j)
        if spec is not None:
            pend[spec.account] = pend.get(spec.account, 0) + spec.gpus
    return TreeInputs(
        parents=parents,
        shares=shares,
        entitlement_gpus=compiled_entitlements(run.compiled, run.cluster),
        usage_gpu_hours={x.leaf: x.usage_gpu_hours for x in snap.leaves} if snap else {},
        running_allocated=gpus_by_account(running, allocated=True),
        running_unallocated=gpus_by_account(running, allocated=False),
        pending_gpus=pend,
        window_s=window_s(run.compiled, run.cluster),
    )


def cluster_view(run: RunDir, t: float | None = None) -> ClusterView:
    when = run.end if t is None else t
    m = moment(run, when)
    rows = build_tree(run_tree_inputs(run, m))
    on: dict[str, list[str]] = {}
    for iv in m.running.values():
        for n in iv.nodes:
            on.setdefault(n, []).append(iv.job)
    drained = tuple(DrainedNode(n, s, tuple(sorted(on.get(n, ())))) for n, s in sorted(m.drained.items()))
    running = sum(iv.gpus for iv in m.running.values())
    pending = sum(run.jobs[j].gpus for j in m.pending if j in run.jobs)
    return ClusterView(run.cluster, when, run.capacity_gpus, running, pending, tuple(rows), drained)
