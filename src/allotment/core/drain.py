"""Draining unhealthy nodes (docs/design/draining.md).

An unhealthy node takes no new work.  Every job on it that is past its protection (and unallocated
work at once) is evicted by the ``drain`` rule; protected jobs finish their minimum runtime first.
An empty unhealthy node is reported ``ready-for-repair``.  A node whose drain waits on a job
protected longer than ``human_drain_threshold_s`` after the node went unhealthy is flagged
``needs_human``: someone must decide whether to break that job's contract.

Under ``non_resumable: run_to_completion`` a non-resumable job is never killed, not even to drain
a node (the same rule as preemption, docs/design/preemption.md): it finishes on the draining node,
and its expected end counts as its protection for ``needs_human``.
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
    keep_nonresumable: bool = False,
) -> tuple[NodeReport, ...]:
    """Evict (through ``evict(job, reason)``) what may go, and report every unhealthy node."""

    def kept_until(r: Run) -> float:
        return max(r.protected_until, r.est_end) if keep_nonresumable and not r.resumable else r.protected_until

    reports: list[NodeReport] = []
    for i in sorted(unhealthy_since):
        name = pool.names[i]
        for jid in sorted(pool.jobs[i]):
            if jid in preemptible and not (keep_nonresumable and not running[jid].resumable):
                evict(jid, f"node {name} is unhealthy")
        waiting = tuple(sorted(pool.jobs[i]))
        if not waiting:
            reports.append(NodeReport(name, "ready-for-repair", (), False, "empty: no job left on it"))
            continue
        since = unhealthy_since[i]
        human = any(kept_until(running[j]) - since > threshold_s for j in waiting)
        reason = "waiting for minimum runtimes (and jobs run to completion) to end"
        if human:
            reason += "; a job is protected past the human-drain threshold"
        reports.append(NodeReport(name, "draining", waiting, human, reason))
    return tuple(reports)
