"""Reservations for blocked gangs (docs/design/reservation.md).

The first blocked multi-node job of the best-ranked queue that has one holds the ``n`` nodes that
can hold ``per`` of its GPUs soonest (by the expected ends of the allocated jobs on them;
unallocated work yields at once, so it does not count).  Later candidates in the same pass may
use those nodes only if they are unallocated or expected to end before the reservation starts
(backfill), so the gang is never delayed.  The reservation is recomputed every round of every
pass from the state alone: nothing is carried between passes.  The same filter (``allow_for``)
binds every way a job starts: on free GPUs, and through preemption (its victims and its
placement after the eviction), so no start can overrun a reserved node.

Any allocated single-node job of a queue in tier 0 (its team runs below what it is owed) that is
starving (``core.starvation``: waited ``STARVING_S`` since it became eligible) may hold a
reservation too, as if it were a gang, whatever its size: otherwise another team's stream of small
jobs, each protected for its whole run, can keep every node partly busy forever -- an 8-GPU job
never finds an empty node, a 6- or 7-GPU job never finds a node with that many free (``may_hold``).
Such a hold drains whole nodes (``NodeEnds`` knows when a node has no allocated job left, not
when it has ``per`` GPUs free): later than needed for a small job, never earlier.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Mapping

from allotment.core.placement import NodeFilter, NodePool
from allotment.core.starvation import is_starving
from allotment.core.state import Pend, Run


def may_hold(p: Pend, guaranteed: bool, waited_s: float) -> bool:
    """May the blocked allocated job ``p`` hold the reservation?  Gangs always; any single-node
    job of a tier-0 queue (``guaranteed``) once it is starving (``core.starvation``)."""
    return p.n > 1 or (p.n == 1 and guaranteed and is_starving(waited_s))


class Unreserved:
    """The node filter of a ``Hold`` (``allow_for``): admits the nodes not in ``nodes``.  A small
    object of its own, made once per hold: a bound method of the hold stored on the hold
    (``self.admit = self.admits``) made a reference cycle per hold, left to the cyclic GC, and
    ``h.admits`` read per candidate made a new bound method each time."""

    __slots__ = ("nodes",)

    def __init__(self, nodes: frozenset[int]) -> None:
        self.nodes = nodes

    def __call__(self, node: int) -> bool:
        return node not in self.nodes


class Hold:
    """A reservation within one pass: ``holder`` gets ``nodes`` (indices) at ``at``.  Read-only
    by convention; a plain slotted class rather than a frozen dataclass, because every round
    makes one and ``allow_for`` reads it per candidate, and under mypyc a frozen dataclass's
    ``__init__`` runs as interpreted Python (``preemption.retry.SearchState``).  Never hashed
    or compared: the searches key their memo by ``nodes``.  ``admit`` is its filter
    (``Unreserved``), the one object ``allow_for`` returns for every candidate it restricts."""

    __slots__ = ("admit", "at", "holder", "nodes", "queue_key")

    def __init__(self, holder: str, nodes: frozenset[int], at: float, queue_key: tuple[int, int, str]) -> None:
        self.holder = holder
        self.nodes = nodes
        self.at = at
        self.queue_key = queue_key  # the holder's queue's place when it was made
        self.admit: NodeFilter = Unreserved(nodes)

    def __repr__(self) -> str:
        return f"Hold({self.holder!r}, {sorted(self.nodes)}, {self.at}, {self.queue_key})"


def allow_for(h: Hold | None, p: Pend, now: float, may_yield: bool = False) -> NodeFilter | None:
    """The nodes ``p`` may start on while ``h`` stands (None: any).  Its holder, unallocated work
    (it yields at once) and a job expected to end before the reservation starts may use every
    node; any other job only the unreserved ones.  ``may_yield`` (``Starting.may_yield``: a
    debug job, in a mode where a reservation may evict it): a job whose *protection* ends by
    the reservation's start may use them too, and then yields to it (``yields``).  The scheduler
    grants that filter only to a start on free GPUs or in place of unallocated work -- never one
    that evicts allocated work, which would be lost twice."""
    if h is None or h.holder == p.jid or p.mr <= 0:
        return None
    left = max(0.0, p.work - p.done_work)
    if now + (min(p.mr, left) if may_yield else left) <= h.at:
        return None
    return h.admit


def yields(h: Hold | None, p: Pend, now: float, placement: tuple[tuple[int, int], ...], may_yield: bool) -> bool:
    """Does ``p``, starting now on ``placement``, yield to reservations once its protection ends?
    Yes when it may yield, lands on a node ``h`` reserves and would still run when the
    reservation starts."""
    if not may_yield or h is None or h.holder == p.jid or p.mr <= 0 or now + max(0.0, p.work - p.done_work) <= h.at:
        return False
    return any(i in h.nodes for i, _ in placement)


class NodeEnds:
    """Per node, when a reservation may have it: the latest ``Run.frees_at`` of its allocated
    jobs (-inf: none).  Also kept as the nodes with none (``idle``) and the others sorted by
    (time, node) (``busy``), so that ``plan_hold`` reads the few soonest instead of every node."""

    def __init__(self, n_nodes: int) -> None:
        self.end: list[float] = [-math.inf] * n_nodes
        self.idle: set[int] = set(range(n_nodes))
        self.busy: list[tuple[float, int]] = []

    def set_end(self, i: int, end: float) -> None:
        old = self.end[i]
        if old == end:
            return
        if old == -math.inf:
            self.idle.discard(i)
        else:
            del self.busy[bisect_left(self.busy, (old, i))]
        if end == -math.inf:
            self.idle.add(i)
        else:
            insort(self.busy, (end, i))
        self.end[i] = end

    def started(self, r: Run) -> None:
        if r.allocated:
            at = r.frees_at()
            for i, _ in r.placement:
                if at > self.end[i]:
                    self.set_end(i, at)

    def stopped(self, r: Run, pool: NodePool, running: Mapping[str, Run]) -> None:
        """After ``r`` left the pool: recompute its nodes from the jobs still there."""
        if r.allocated:
            for i, _ in r.placement:
                self.set_end(i, max(
                    (running[j].frees_at() for j in pool.jobs[i] if running[j].allocated),
                    default=-math.inf,
                ))


def plan_hold(
    pool: NodePool, ends: NodeEnds, holder: str, gpu_type: str | None, n: int, per: int, now: float, key: tuple[int, int, str]
) -> Hold | None:
    """The ``n`` nodes that can hold ``per`` GPUs soonest, and when (never before ``now``): the
    ``n`` smallest (free at, node) over the hosts, where a node with ``per`` free or no allocated
    job is free at -inf -- taken as those in node order, then the soonest-ending others."""
    hosts = pool.hosts(per, gpu_type)
    if len(hosts) < n:
        return None
    ok = pool.host_flags(per, gpu_type)
    soon_set = {i for i in ends.idle if ok[i]}
    soon_set.update(i for i in pool.free_at_least(per) if ok[i])
    soon = sorted(soon_set)
    if len(soon) >= n:
        return Hold(holder, frozenset(soon[:n]), now, key)
    chosen, last = soon, -math.inf
    for e, i in ends.busy:  # every host not soon is here: its job ends at e
        if ok[i] and i not in soon_set:
            chosen.append(i)
            last = e
            if len(chosen) == n:
                break
    return Hold(holder, frozenset(chosen), max(now, last), key)
