"""Draining unhealthy nodes (docs/design/draining.md).

An unhealthy node takes no new work.  Every job on it that is past its protection (and unallocated
work at once) is evicted by the ``drain`` rule; protected jobs finish their minimum runtime first.
An empty unhealthy node is reported ``ready-for-repair``.  A node whose drain waits on a job
protected longer than ``human_drain_threshold_s`` after the node went unhealthy is flagged
``needs_human``: someone must decide whether to break that job's contract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.core.decisions import NodeReport
from allotment.core.placement import NodePool
from allotment.core.state import Run


def drain(
    pool: NodePool,
    running: Mapping[str, Run],
    preemptible: Mapping[str, None],
    unhealthy_since: Mapping[int, float],
    threshold_s: float,
    evict: Callable[[str, str], None],
) -> tuple[NodeReport, ...]:
    """Evict (through ``evict(job, reason)``) what may go, and report every unhealthy node."""
    reports: list[NodeReport] = []
    for i in sorted(unhealthy_since):
        name = pool.names[i]
        for jid in sorted(pool.jobs[i]):
            if jid in preemptible:
                evict(jid, f"node {name} is unhealthy")
        waiting = tuple(sorted(pool.jobs[i]))
        if not waiting:
            reports.append(NodeReport(name, "ready-for-repair", (), False, "empty: no job left on it"))
            continue
        since = unhealthy_since[i]
        human = any(running[j].protected_until - since > threshold_s for j in waiting)
        reason = "waiting for minimum runtimes to end"
        if human:
            reason += "; a job is protected past the human-drain threshold"
        reports.append(NodeReport(name, "draining", waiting, human, reason))
    return tuple(reports)
