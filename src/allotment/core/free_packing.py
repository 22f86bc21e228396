"""Free packing: a blocked unallocated job takes a node from smaller unallocated work
(``Policy.consolidate``; docs/design/preemption.md, "Free packing").

Why.  With consolidation on, the idle capacity left on the 88-GPU b200 cluster (30 days of
``ai2``, seed 1, ``scripts/idle_gpus.py``) was almost all time when every waiting job was an
unallocated 8-GPU job, while partly free nodes held smaller unallocated work that consolidation
could not move: no other node had holes it fitted.  Those GPUs stayed idle until the small
work ended by itself.  Unallocated work is free and protected by nothing; when a node's free
GPUs plus the smaller unallocated work on it make room for a waiting unallocated job, swapping
them fills the node now, and the smaller work waits where it fits holes later.

The rule.  A blocked unallocated single-node job ``p`` (``per`` GPUs) that consolidation could
not start may evict, on one node its filter admits and that has some but too few free GPUs,
*movable* unallocated single-node jobs (resumable, requeued, not sessions, not started in this
pass: ``Starting._movable_free``) each of **strictly fewer GPUs than ``p``**, least lost work
first, until the node has ``per`` free GPUs.  The node whose victims throw away the least work
(GPU-seconds since their last checkpoint), then the fewest GPUs, then the lowest index, is
chosen.  The victims requeue (rule ``free-packing``).

Why it cannot thrash: a job only ever evicts strictly smaller jobs, so no two jobs evict each
other back and forth, and a chain of evictions grows in size at every step.  Why it only adds
occupancy: the node's free GPUs were idle and ``p`` uses them with the victims' GPUs; allocated
work is never touched (a funded team's progress is never thrown away for work nobody pays for),
and nothing here is charged.

A pure function of the pool, the running jobs and ``now``: no memo, so the fast and the
reference walks decide identically (the fast walk's bound, ``core.walk._may_move_free_for``,
admits a visit whenever some node with free GPUs could reach ``per`` with its unallocated work).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.core.placement import NodeFilter, NodePool
from allotment.core.preemption.view import lost_work
from allotment.core.state import Run

RULE = "free-packing"
WHY = "unallocated work yields its node to a larger unallocated job that fills it ({job})"


class Packing:
    """The node ``target`` and the jobs to evict there (``victims``).  Read-only by convention."""

    __slots__ = ("target", "victims")

    def __init__(self, target: int, victims: tuple[str, ...]) -> None:
        self.target, self.victims = target, victims

    def __repr__(self) -> str:
        return f"Packing({self.target}, {list(self.victims)})"


def plan_free_packing(pool: NodePool, running: Mapping[str, Run], movable: Callable[[Run], bool],
                      gpu_type: str | None, per: int, allow: NodeFilter | None, closed: frozenset[int],
                      now: float) -> Packing | None:
    """The cheapest node where evicting smaller movable unallocated work gives ``per`` free GPUs,
    or None.  ``closed`` nodes (reserved, or a session pool) are never used; only nodes with
    some but too few free GPUs are read (``NodePool.buckets``)."""
    flags = pool.host_flags(per, gpu_type)
    best: tuple[float, int, int] | None = None
    got: Packing | None = None
    for k in range(1, min(per, pool.max_gpus + 1)):
        for i in sorted(pool.buckets[k]):
            if not flags[i] or i in closed or (allow is not None and not allow(i)):
                continue
            items: list[tuple[float, int, str]] = []
            for jid in pool.jobs[i]:
                r = running[jid]
                if not r.allocated and r.gpus < per and len(r.placement) == 1 and movable(r):
                    items.append((lost_work(r, now) * r.gpus, r.gpus, jid))
            items.sort()
            have, lost = k, 0.0
            chosen: list[str] = []
            for cost, g, jid in items:
                if have >= per:
                    break
                chosen.append(jid)
                have += g
                lost += cost
            if have < per:
                continue
            key = (lost, have - k, i)
            if best is None or key < best:
                best, got = key, Packing(i, tuple(chosen))
    return got
