"""Consolidation: move resumable work past its protection to free a node for a blocked job
(``Policy.consolidate``; docs/design/preemption.md, "Consolidation").

Why.  On a cluster of 8-GPU nodes a stream of 1-4 GPU jobs leaves holes of 1-7 free GPUs spread
over many nodes.  A whole-node job (or a 4-GPU one against holes of 1-3) then waits although the
free GPUs add up to more than it needs: no ordering or reservation rule fills such holes
(``scripts/idle_gpus.py`` on 30 days of ``ai2`` on b200: 4.6% of capacity idle this way, against
0.1% held by a reservation or the tick).  Only moving running work can, which is what Ai2's open
problem (protection fragments capacity) calls for.

The rule.  When a blocked single-node job ``p`` found no victims (an allocated one) or may take
none (an unallocated one: it then moves only unallocated work), the scheduler may
pick a target node it could use (its node filter admits it, its type and size fit) and move the
single-node jobs there that are *movable* -- resumable, requeued on preemption, past their
protection (or unallocated), not interactive sessions, not started in this pass -- to the free
GPUs of other nodes (off every reserved node), so that the target has ``per`` free GPUs.  A
move is a preemption (rule ``consolidate``; the job keeps its last checkpoint) and a start on
the chosen node in the same pass; nobody's work leaves the cluster, every moved job runs again at
once, and ``p`` starts.  Of the ways to free a target, the one that moves the fewest GPUs, then
throws away the least work (GPU-seconds since each job's last checkpoint), then the lowest node
index, is chosen.  Moves never exceed ``p``'s own GPUs: more GPUs restarting than starting would
rather shuffle the cluster than fill it.  Not for gangs: they have their reservation, and moving
work for them (every node of a gang freed this way) moved over a thousand jobs a month on
``ai2-big-gangs`` for no better gang waits (docs/design/preemption.md).

A pure function of the pool, the running jobs and ``now``: no memo, so the fast walk and the
reference walk decide identically (the fast walk's bounds in ``core.walk`` cover it: a
consolidation needs at least ``p.gpus`` free GPUs in all, which ``_search_bound`` counts for an
allocated job, and ``_may_move_free_for`` tests for an unallocated one, with some unallocated
work preemptible).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.core.jobs import JobSpec
from allotment.core.placement import NodeFilter, NodePool
from allotment.core.preemption.view import lost_work
from allotment.core.state import Run

RULE = "consolidate"
MAX_ITEMS = 10  # movable jobs on one node tried as every subset; beyond, the fewest-GPU ones first


class Move:
    """Job ``job_id`` (``gpus`` on one node) goes to node ``node``.  Read-only by convention."""

    __slots__ = ("gpus", "job_id", "lost", "node")

    def __init__(self, job_id: str, node: int, gpus: int, lost: float) -> None:
        self.job_id, self.node, self.gpus, self.lost = job_id, node, gpus, lost

    def __repr__(self) -> str:
        return f"Move({self.job_id!r}, {self.node}, {self.gpus}, {self.lost})"


class Consolidation:
    """The node freed for the blocked job (``target``) and the moves that free it."""

    __slots__ = ("moves", "target")

    def __init__(self, target: int, moves: tuple[Move, ...]) -> None:
        self.target, self.moves = target, moves


class _Way:
    """One way to free a target: the jobs to move and where each goes, and what it costs."""

    __slots__ = ("gpus", "lost", "moves", "node")

    def __init__(self, node: int, moves: list[Move]) -> None:
        self.node, self.moves = node, moves
        self.gpus = sum(m.gpus for m in moves)
        self.lost = sum(m.lost * m.gpus for m in moves)

    def key(self) -> tuple[int, float, int]:
        return (self.gpus, self.lost, self.node)


def plan_consolidation(pool: NodePool, running: Mapping[str, Run], movable: Callable[[Run], bool], gpu_type: str | None,
                       per: int, allow: NodeFilter | None, closed: frozenset[int], now: float,
                       pre_on_node: list[int]) -> Consolidation | None:
    """The moves that free one node of ``per`` GPUs (of ``gpu_type``, admitted by ``allow``)
    for a single-node job of ``per`` GPUs, each moved job to free GPUs on another node not in
    ``closed``; None if there is no such way within the bound (moved GPUs <= ``per``).
    ``pre_on_node``: the preemptible GPUs per node, a bound on what could move off it (every
    movable job is preemptible), so most nodes are passed over without reading their jobs.
    Nodes are read by free GPUs, most first: freeing a node with ``k`` free moves at least
    ``per - k`` GPUs, so once that exceeds the best way found, no later node can beat it."""
    if pool.free_gpus() < per:  # moved work only changes nodes: the job needs this many free in all
        return None
    free, total, types = pool.free, pool.total, pool.gpu_type
    best: _Way | None = None
    for k in range(min(per, pool.max_gpus + 1) - 1, -1, -1):
        if best is not None and per - k > best.gpus:
            break
        for i in sorted(pool.buckets[k]):
            if total[i] < per or (gpu_type is not None and types[i] != gpu_type) or k + pre_on_node[i] < per:
                continue
            if allow is not None and not allow(i):
                continue
            way = _free_node(pool, running, movable, i, per - k, free, closed, per, now)
            if way is not None and (best is None or way.key() < best.key()):
                best = way
    if best is None:
        return None
    return Consolidation(best.node, tuple(best.moves))


def _free_node(pool: NodePool, running: Mapping[str, Run], movable: Callable[[Run], bool], node: int, need: int,
               free: list[int], closed: frozenset[int], budget: int, now: float) -> _Way | None:
    """The cheapest set of movable jobs on ``node`` of at least ``need`` GPUs (at most
    ``budget``) that all fit elsewhere at once, with where each goes; None if none."""
    items: list[tuple[int, float, str]] = []
    for jid, g in pool.jobs[node].items():
        r = running.get(jid)
        if r is not None and len(r.placement) == 1 and movable(r):
            items.append((g, lost_work(r, now), jid))
    if sum(g for g, _, _ in items) < need:
        return None
    items.sort()
    if len(items) > MAX_ITEMS:
        items = items[:MAX_ITEMS]
    best: _Way | None = None
    k = len(items)
    for mask in range(1, 1 << k):
        chosen = [items[j] for j in range(k) if mask >> j & 1]
        total = sum(g for g, _, _ in chosen)
        if total < need or total > budget:
            continue
        if best is not None and total > best.gpus:
            continue
        placed = _place(pool, running, chosen, node, free, closed)
        if placed is None:
            continue
        way = _Way(node, placed)
        if best is None or way.key() < best.key():
            best = way
    return best


def _place(pool: NodePool, running: Mapping[str, Run], chosen: list[tuple[int, float, str]], node: int,
           free: list[int], closed: frozenset[int]) -> list[Move] | None:
    """Best fit of ``chosen`` (largest first) into the free GPUs of the other open nodes."""
    out: list[Move] = []
    taken: dict[int, int] = {}
    for g, lost, jid in sorted(chosen, key=lambda c: (-c[0], c[2])):
        gpu_type = running[jid].spec.gpu_type
        dest = -1
        for i in pool.hosts(g, gpu_type):
            if i == node or i in closed:
                continue
            f = free[i] - taken.get(i, 0)
            if f >= g and (dest < 0 or f < free[dest] - taken.get(dest, 0)):
                dest = i
        if dest < 0:
            return None
        taken[dest] = taken.get(dest, 0) + g
        out.append(Move(jid, dest, g, lost))
    return out


def place_beside_fixed(pool: NodePool, spec: JobSpec, per: int, allow: NodeFilter | None,
                       fixed: list[int]) -> tuple[tuple[int, int], ...] | None:
    """Where a single-node job that can never be moved (not resumable) starts on free GPUs
    while consolidation is on: best fit among the nodes that already hold such work
    (``fixed``: their GPUs per node), else best fit anywhere (``NodePool.find``).  Work that can
    never move, spread one job per node, leaves every node partly pinned, and no move can
    free any of them (the fifth of the blocked passes of ``ai2`` on b200 that found no way);
    packed together, it pins fewer nodes."""
    gpu_type = spec.gpu_type
    for k in range(per, pool.max_gpus + 1):
        for i in sorted(pool.buckets[k]):
            if fixed[i] > 0 and (allow is None or allow(i)) and (gpu_type is None or pool.gpu_type[i] == gpu_type):
                return ((i, spec.gpus),)
    return pool.find(spec, 1, per, allow)
