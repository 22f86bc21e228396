"""Which queues a round of a pass must visit: the one interface behind which the scheduler's
speed-ups sit, with a plain reference.

``REFERENCE`` visits every non-empty queue every round.  ``FAST`` skips a queue only when a
cheap *necessary* condition for any decision there is false, so skipping it cannot change what
the pass decides (a visit that decides nothing has no effect: it changes no state).  The
reservation is decided before the walk and only its holder acts on it (it re-plans it, or evicts
the jobs that yield to it), so the holder's queue is always visited (``Scheduler._round``) and
the tests below are for every other queue.  A visit only looks at the queue's candidates (its
``queue_depth`` best jobs by the whole within-team score over the whole queue, not yet tried this
round: ``Scheduler._candidates``, the very list the visit then offers), and can decide something
only if one of them

* needs no more GPUs per node than the best node has free (a start on free GPUs), or
* is allocated work, preemption is possible, some job is preemptible, and the free GPUs plus
  every GPU a victim search could take for this queue (unallocated work, which any allocated
  candidate may take; with reclaim, its own team's preemptible work, and in tier 0 every
  account's) reach its GPUs; or
* is an allocated single-node job needing no more GPUs per node than one node of the session
  pool has free or lent (``Room.lent``): if it is a session, it may take lent GPUs back
  (``core.session_pool``); or
* (over the whole queue, not only the candidates) unallocated work runs and the free GPUs plus its
  GPUs reach the fewest GPUs of an allocated job of the queue: any of them may take its place
  (``Scheduler._free_work_for_the_rest``).

The fast walk also *reuses* answers computed on the very same inputs (``reuses``): the Fair Tree
ranks and reclaim measures for the same epoch and the same (immutable) usage mapping; a queue's
key for the same pass inputs and the same allocated GPUs of its account; and, on the same state
version (``ClusterState.version``, bumped by every change of what they read), a failed victim
search or a reservation plan for the same job and the accounts running over what they are owed
(``VictimView.memo``); a failed search, later, while nothing could make it succeed
(``core.preemption.retry``); a queue's candidate order while nothing it reads changed
(``core.candidates``); and the ``Room`` its tests read, while the holds (one or none), the pool
and the time are the same (``Scheduler._room``).  The reference recomputes everything every time.
What the fast walk keeps, and each memo's guards, live in one place: ``core.fast_walk`` (``Kept``;
``Memos``, the reference's, keeps nothing), picked by ``reuses``.  Both fast walks
(``FAST``; ``UNKEPT``, the reference's visits with only that, where the kept orders do not hold:
outside the ``fixed`` derivation) read what a prerequisite inherits from its dependants' merged
parts (``merges``, ``core.inherited``), the reference from each dependant.

``tests/sim/test_walk_equivalence.py`` checks over generated workloads that both produce the same
decisions and metrics; ``allot simulate --no-skip`` runs the reference.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from allotment.core.accounting import Accounting
from allotment.core.modes import Mode
from allotment.core.placement import NodePool
from allotment.core.queues import Shapes
from allotment.core.state import Pend
from allotment.core.tiers import GUARANTEED, UNALLOCATED


@mypyc_attr(allow_interpreted_subclasses=True)
class WalkPolicy:
    """The interface.  A base class rather than a Protocol: the pass asks it twice per queue per
    round, and under mypyc a call through a Protocol is a generic Python method call (6% of a
    compiled run), through a class a native one.  Tests may subclass it in Python."""

    name = ""
    reuses = False  # may answers computed on identical inputs be reused?
    merges = False  # may a prerequisite's dependants be read merged (``core.inherited``), not one by one?

    def may_visit(self, shapes: Shapes, tier: int, account: str, pool: NodePool, acct: Accounting, mode: Mode,
                  room: Room) -> bool:
        """``must_visit``'s conditions over every job of the queue (``shapes``), tested before
        its candidates are picked: False only if ``must_visit`` would be False for any of them."""
        raise NotImplementedError

    def must_visit(self, head: Sequence[Pend], shapes: Shapes, tier: int, account: str, pool: NodePool,
                   acct: Accounting, mode: Mode, room: Room) -> bool:
        """Must a round visit the queue whose candidates (the jobs its visit would offer, in
        that order) are ``head``, at the pass's epoch ``t``?"""
        raise NotImplementedError

    def rest_may_take(self, shapes: Shapes, pool: NodePool, acct: Accounting) -> bool:
        """May any allocated job of the queue (``shapes``) take the place of unallocated work
        (``Scheduler._free_work_for_the_rest``)?  False only if none of them could."""
        raise NotImplementedError


class Reference(WalkPolicy):
    name = "reference"
    reuses = False

    def rest_may_take(self, shapes: Shapes, pool: NodePool, acct: Accounting) -> bool:
        return True

    def may_visit(self, shapes: Shapes, tier: int, account: str, pool: NodePool, acct: Accounting, mode: Mode,
                  room: Room) -> bool:
        return True

    def must_visit(self, head: Sequence[Pend], shapes: Shapes, tier: int, account: str, pool: NodePool,
                   acct: Accounting, mode: Mode, room: Room) -> bool:
        return True


class Unkept(Reference):
    """The reference's walk, reusing nothing, but reading a prerequisite's dependants merged
    (``core.inherited``: the same maximum, from a handful of numbers per job instead of its
    whole chain): what ``FAST`` falls back to outside the ``fixed`` derivation, whose kept
    orders (``core.candidates``) read the load only through the fit weight."""

    name = "unkept"
    merges = True


class Fast(WalkPolicy):
    name = "fast"
    reuses = True
    merges = True

    def rest_may_take(self, shapes: Shapes, pool: NodePool, acct: Accounting) -> bool:
        # a search for unallocated work only can free at most the free GPUs and every GPU of
        # unallocated work (``Starting.victims_for``'s first bound turns a job needing more
        # away before any search or memo): no allocated job of the queue needs fewer than
        # ``least_alloc_gpus`` (0: there is none, and the loop offers nothing)
        return pool.free_gpus() + acct.unalloc_gpus >= shapes.least_alloc_gpus()

    def may_visit(self, shapes: Shapes, tier: int, account: str, pool: NodePool, acct: Accounting, mode: Mode,
                  room: Room) -> bool:
        # each test is must_visit's, with a minimum or "any" over the whole queue in place of
        # one over the candidates, which are some of its jobs
        if not shapes.per:
            return False  # nothing in it can ever be placed
        least = shapes.least_per()
        if least <= room.open_free or (least <= pool.max_free() and shapes.least_short() <= room.until):
            return True  # may start on free GPUs: off the reserved nodes, or on them if it leaves in time
        if _may_move_free_for(least, pool, acct, room):
            return True  # an unallocated job may start by consolidation (a bound: ``least`` counts every job)
        if room.lent and mode.can_preempt and shapes.alloc_gpus and shapes.least_alloc_gpus() <= room.lent:
            return True  # an allocated session may take lent pool GPUs back (core.session_pool)
        if not shapes.alloc_gpus or not mode.can_preempt or tier == UNALLOCATED or not acct.preemptible:
            return False
        return _search_bound(tier, account, pool, acct, mode) >= shapes.least_alloc_gpus()

    def must_visit(self, head: Sequence[Pend], shapes: Shapes, tier: int, account: str, pool: NodePool,
                   acct: Accounting, mode: Mode, room: Room) -> bool:
        # only the candidates are looked at, so the conditions are over them, not the queue
        max_free = pool.max_free()
        min_gpus = 0  # the fewest GPUs of a candidate that may search for victims
        for p in head:
            if p.n == 0:
                continue  # never placed
            if p.per <= room.open_free or (p.per <= max_free and (
                    p.mr <= 0 or min(p.mr, max(0.0, p.work - p.done_work)) <= room.until)):
                return True  # may start on free GPUs: off the reserved nodes, or on them if it leaves in time
            if p.mr > 0 and (min_gpus == 0 or p.gpus < min_gpus):
                min_gpus = p.gpus
            if p.mr > 0 and p.n == 1 and p.per <= room.lent and mode.can_preempt:
                return True  # if a session, it may take lent pool GPUs back (core.session_pool)
            if p.mr <= 0 and p.n == 1 and _may_move_free_for(p.per, pool, acct, room):
                return True  # may start by consolidation, moving unallocated work
        if not mode.can_preempt or tier == UNALLOCATED or not acct.preemptible:
            return False  # no start on free GPUs, and no victim search can run
        if min_gpus and _search_bound(tier, account, pool, acct, mode) >= min_gpus:
            return True
        # any allocated job of the queue may take unallocated work (Scheduler._free_work_for_the_rest)
        return bool(acct.unalloc_gpus and shapes.alloc_gpus
                    and pool.free_gpus() + acct.unalloc_gpus >= shapes.least_alloc_gpus())


class Room:
    """Where a round's starts on free GPUs may go while a reservation stands (``Scheduler._round``):
    ``open_free``, the most free GPUs on one healthy node it does not hold; ``until``, the time
    left before it starts (inf: no reservation, and ``open_free`` is the best node's).  A job
    may start on reserved GPUs only if it leaves them by then (``reservation.allow_for``; the
    holder's queue is visited whatever these say).  ``lent``: the most GPUs one healthy node of
    the session pool has free or lent to other work (``SessionPool.room``; 0: no pool), what a
    single-node session may take there at once.  ``consolidates``: consolidation is on, so a
    blocked unallocated job may start by moving unallocated work (``core.consolidation``)."""

    __slots__ = ("consolidates", "lent", "open_free", "until")

    def __init__(self, open_free: int, until: float, lent: int = 0, consolidates: bool = False) -> None:
        self.open_free, self.until, self.lent, self.consolidates = open_free, until, lent, consolidates


def _may_move_free_for(per: int, pool: NodePool, acct: Accounting, room: Room) -> bool:
    """Could consolidation or free packing start an unallocated single-node job of ``per`` GPUs
    per node?  Only by moving or evicting unallocated work (``Starting.consolidate_for``,
    ``Starting.pack_free_for``): on some node the free GPUs plus its preemptible unallocated
    work (``Accounting.owner_nodes[""]``) must reach ``per``, for only that work may leave it;
    and a move goes onto GPUs free now, so the free GPUs in all must reach ``per`` too, while
    free packing takes a node that has some free GPUs (it fills them)."""
    if not room.consolidates or acct.unalloc_gpus <= 0:
        return False
    moves = per <= pool.free_gpus()  # consolidation needs that many free in all; free packing does not,
    free = pool.free  # but it needs some free GPUs on the node it takes (core.free_packing)
    for i, g in acct.owner_nodes.get("", {}).items():
        if free[i] + g >= per and (moves or free[i] > 0):
            return True
    return False


def _search_bound(tier: int, account: str, pool: NodePool, acct: Accounting, mode: Mode) -> int:
    """Free GPUs plus every GPU a victim search for a queue of ``account`` in ``tier`` could
    take: unallocated work, and with reclaim its own team's preemptible work, in tier 0 every
    account's."""
    bound = pool.free_gpus() + acct.unalloc_gpus
    if mode.reclaims:  # with debug_reclaim a debug job of any tier may take every account's
        bound += acct.alloc_gpus_pre_total if tier == GUARANTEED or mode.debug_reclaims else acct.alloc_gpus_pre.get(account, 0)
    return bound


REFERENCE: WalkPolicy = Reference()
FAST: WalkPolicy = Fast()
UNKEPT: WalkPolicy = Unkept()
