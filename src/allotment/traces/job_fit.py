"""Whether a trace's jobs can be replayed on one cluster of a config, asked line by line.

A job whose account is no budget leaf with a budget on the replayed cluster (the core's
``Context.leaves``: listed for the cluster and inside its validity dates) would be simulated and
charged outside every team; a job
whose GPU type the cluster lacks, or larger than the cluster, would be rejected at submission and
never run.  Both make a replay quietly answer another question than the one asked, so they are
errors at ``file:line:col`` (the account, ``gpu_type`` or ``gpus`` key), found by the same
reader pass for ``allot trace check --repo``, ``allot trace import --repo`` and ``allot simulate
--trace``.  There is no silent mapping: an importer's ``--account-map RAW=LEAF`` is the
documented way to charge a source account to a leaf (docs/trace-format.md).

"Larger than the cluster" is the core's own placement rule (``NodePool.shape``), not a copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.core.placement import NodePool
from allotment.core.snapshot import NodeState
from allotment.errors import UsageError


@dataclass(frozen=True, slots=True)
class JobProblem:
    """One reason a job cannot replay: the trace key it is about and what is wrong."""

    key: str
    message: str


@dataclass(frozen=True, slots=True)
class JobFit:
    """The facts of one cluster of a config that a trace job must fit."""

    cluster: str
    leaves: frozenset[str]  # leaves with a budget on this cluster (the core's ``Context.leaves``)
    other_leaves: frozenset[str]  # leaves of the tree without one here (not listed, or expired)
    inner: frozenset[str]  # budget nodes with children: not chargeable
    gpu_types: tuple[str, ...]
    capacity_gpus: int
    pool: NodePool
    nodes: tuple[NodeState, ...] = ()  # the cluster's nodes, for ``never_run``

    def problems(self, job: JobSpec) -> list[JobProblem]:
        out: list[JobProblem] = []
        if job.account not in self.leaves:
            if job.account in self.other_leaves:
                why = (
                    f"account {job.account!r} has no budget on cluster {self.cluster} "
                    "(the leaf is not available there, or is outside its validity dates)"
                )
            elif job.account in self.inner:
                why = f"account {job.account!r} is not a leaf budget; a job charges one leaf"
            else:
                why = f"unknown account {job.account!r}: no budget leaf has that name"
            out.append(JobProblem("account", why))
        if job.gpu_type is not None and job.gpu_type not in self.gpu_types:
            known = ", ".join(self.gpu_types) or "none"
            out.append(
                JobProblem(
                    "gpu_type",
                    f"unknown GPU type {job.gpu_type!r} on cluster {self.cluster} (it has {known})",
                )
            )
        elif self.pool.shape(job) == (0, 0):
            shape = f" ({job.gpus_per_node} a node)" if job.gpus_per_node else ""
            of = f" {job.gpu_type}" if job.gpu_type else ""
            out.append(
                JobProblem(
                    "gpus",
                    f"a job of {job.gpus:,}{of} GPUs{shape} can never fit cluster "
                    f"{self.cluster} ({self.capacity_gpus:,} GPUs, at most "
                    f"{self.pool.max_gpus} a node)",
                )
            )
        return out


def job_fit(config: CompiledConfig, cluster: str | None = None) -> JobFit:
    """The checks for ``cluster`` of ``config`` (default: its largest cluster)."""
    name = cluster or config.largest_cluster()
    if name not in config.clusters:
        known = ", ".join(sorted(config.clusters))
        raise UsageError(f"--cluster {name}: unknown; known: {known}")
    cl = config.clusters[name]
    here = frozenset(build_context(config, name).leaves)
    nodes = tuple(
        NodeState(n, g.gpus_per_node, True, g.gpu_type)
        for g in cl.node_groups
        for n in g.node_names
    )
    return JobFit(
        cluster=name,
        leaves=here,
        other_leaves=frozenset(n.name for n in config.nodes if n.leaf) - here,
        inner=frozenset(n.name for n in config.nodes if not n.leaf),
        gpu_types=tuple(sorted({g.gpu_type for g in cl.node_groups})),
        capacity_gpus=cl.gpus,
        pool=NodePool(nodes),
        nodes=nodes,
    )


def nodes_gone(fit: JobFit, events: Sequence[NodeEvent]) -> list[tuple[float, str]]:
    """``(time, node)`` of each node of the cluster that the trace takes out for good (its last
    event is ``unhealthy``), in time order.  ``events`` in time order."""
    known = {n.name for n in fit.nodes}
    last: dict[str, NodeEvent] = {}
    for e in events:
        if e.node in known:
            last[e.node] = e
    return sorted((e.time, e.node) for e in last.values() if e.state == "unhealthy")


def never_run(fit: JobFit, jobs: Iterable[JobSpec], events: Sequence[NodeEvent]) -> list[str]:
    """Jobs that no node still healthy from their submission on could ever run: the trace takes
    nodes out for good (their last event is ``unhealthy``) and what is left is too small.  Such a
    job would wait forever, and a run "until every job is done" would never end (issue 32,
    item 11); it is refused before simulating.  ``jobs`` and ``events`` in time order; ``jobs``
    is read once, and not at all when no node is gone (a trace file's jobs can be streamed).  (A job
    submitted before the nodes go, that waits until they are gone, is not caught here.)"""
    known = {n.name for n in fit.nodes}
    gone = nodes_gone(fit, events)
    out: list[str] = []
    if not gone:
        return out
    left, i, pool = set(known), 0, fit.pool
    for j in jobs:
        if i < len(gone) and gone[i][0] <= j.submit:
            while i < len(gone) and gone[i][0] <= j.submit:
                left.discard(gone[i][1])
                i += 1
            pool = NodePool(tuple(n for n in fit.nodes if n.name in left))
        if pool.shape(j) == (0, 0):
            gpus = sum(n.gpus for n in fit.nodes if n.name in left)
            out.append(
                f"job {j.id!r} (submitted at {j.submit:g} s) can never run: from then on only "
                f"{len(left)} of the {len(known)} nodes of {fit.cluster} ({gpus:,} GPUs) are "
                "ever healthy again, and it does not fit them"
            )
    return out
