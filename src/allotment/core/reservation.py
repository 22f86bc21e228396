"""Reservations for blocked gangs (docs/design/reservation.md).

The first blocked multi-node job of the best-ranked queue that has one holds the ``n`` nodes that
can hold ``per`` of its GPUs soonest (by the expected ends of the allocated jobs on them;
unallocated work yields at once, so it does not count).  Later candidates in the same pass may
use those nodes only if they are unallocated or expected to end before the reservation starts
(backfill), so the gang is never delayed.  The reservation is recomputed every round of every
pass from the state alone: nothing is carried between passes.  The same filter (``allow_for``)
binds every way a job starts: on free GPUs, and through preemption (its victims and its
placement after the eviction), so no start can overrun a reserved node.

A whole-node job (one node, all its GPUs) of a queue in tier 0 (its team runs below what it is
owed) that has waited ``STARVING_S`` since it became eligible may hold a reservation too, as if it
were a gang: otherwise another team's stream of small jobs, each protected for its whole run, can
keep every node partly busy forever (``may_hold``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.core.placement import NodeFilter, NodePool
from allotment.core.state import Pend, Run

STARVING_S = 3600.0  # a whole-node job of an under-served team waiting this long reserves a node


def may_hold(p: Pend, node_gpus: int, guaranteed: bool, waited_s: float) -> bool:
    """May the blocked allocated job ``p`` hold the reservation?  Gangs always; a whole-node
    job of a tier-0 queue (``guaranteed``) once it has waited ``STARVING_S``."""
    return p.n > 1 or (p.n == 1 and p.per >= node_gpus and guaranteed and waited_s >= STARVING_S)


@dataclass(frozen=True, slots=True)
class Hold:
    """A reservation within one pass: ``holder`` gets ``nodes`` (indices) at ``at``."""

    holder: str
    nodes: frozenset[int]
    at: float
    queue_key: tuple[int, int, str]  # the holder's queue's place when it was made

    def admits(self, node: int) -> bool:
        return node not in self.nodes


def allow_for(h: Hold | None, p: Pend, now: float) -> NodeFilter | None:
    """The nodes ``p`` may start on while ``h`` stands (None: any).  Its holder, unallocated work
    (it yields at once) and a job expected to end before the reservation starts may use every
    node; any other job only the unreserved ones."""
    if h is None or h.holder == p.jid or p.mr <= 0 or now + max(0.0, p.spec.work - p.done_work) <= h.at:
        return None
    return h.admits


class NodeEnds:
    """Per node, when its last allocated job is expected to end (-inf: none)."""

    def __init__(self, n_nodes: int) -> None:
        self.end: list[float] = [-math.inf] * n_nodes

    def started(self, r: Run) -> None:
        if r.allocated:
            for i, _ in r.placement:
                if r.est_end > self.end[i]:
                    self.end[i] = r.est_end

    def stopped(self, r: Run, pool: NodePool, running: Mapping[str, Run]) -> None:
        """After ``r`` left the pool: recompute its nodes from the jobs still there."""
        if r.allocated:
            for i, _ in r.placement:
                self.end[i] = max(
                    (running[j].est_end for j in pool.jobs[i] if running[j].allocated),
                    default=-math.inf,
                )


def plan_hold(
    pool: NodePool, ends: NodeEnds, holder: str, gpu_type: str | None, n: int, per: int, now: float, key: tuple[int, int, str]
) -> Hold | None:
    """The ``n`` nodes that can hold ``per`` GPUs soonest, and when (never before ``now``)."""
    free = pool.free
    free_at = [(-math.inf if free[i] >= per else ends.end[i], i) for i in pool.hosts(per, gpu_type)]
    if len(free_at) < n:
        return None
    chosen = heapq.nsmallest(n, free_at)
    return Hold(holder, frozenset(i for _, i in chosen), max(now, chosen[-1][0]), key)
