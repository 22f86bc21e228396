"""Reservations for blocked gangs (docs/design/reservation.md).

The first blocked multi-node job of the best-ranked queue that has one holds the ``n`` nodes that
can hold ``per`` of its GPUs soonest (by the expected ends of the allocated jobs on them;
unallocated work yields at once, so it does not count).  Later candidates in the same pass may
use those nodes only if they are unallocated or expected to end before the reservation starts
(backfill), so the gang is never delayed.  The reservation is recomputed every round of every
pass from the state alone: nothing is carried between passes -- unless the knob ``keep_hold``
is on, when the last round's holder keeps its hold while it may (``keeps``), remembered with
its first planned start (``core.snapshot.KeptHold``).  The same filter (``allow_for``)
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

from allotment.core.placement import NodeFilter, NodePool
from allotment.core.sorted_pairs import drop_numbered, insort_numbered
from allotment.core.starvation import is_starving
from allotment.core.state import Pend, Run


def may_hold(p: Pend, guaranteed: bool, waited_s: float) -> bool:
    """May the blocked allocated job ``p`` hold the reservation?  Gangs always; any single-node
    job of a tier-0 queue (``guaranteed``) once it is starving (``core.starvation``)."""
    return p.n > 1 or (p.n == 1 and guaranteed and is_starving(waited_s))


def keepable(keep: str, p: Pend, floor_gpus: float) -> bool:
    """Is ``p``'s hold one the knob keeps at all: any holder with ``keep_hold`` "all", a gang
    with "gangs", and either way one of at least ``floor_gpus`` (``keep_hold_min_fraction`` of
    the cluster's GPUs): a hand-over wastes a drain, and a kept hold keeps nodes from other work,
    both in proportion to the gang's part of the cluster (docs/design/reservation.md)."""
    return (keep == "all" or p.n > 1) and p.gpus >= floor_gpus


def keeps(keep: str, p: Pend, guaranteed: bool, waited_s: float, floor_gpus: float) -> bool:
    """Does the last holder ``p`` keep its reservation this round (``keepable``)?  While it
    still may hold one (``may_hold``) and its queue is in tier 0 (``guaranteed``), whatever the
    other tier-0 queues' Fair Tree ranks: a hold passed on to a better-ranked under-served team's
    gang wasted its drain (``ai2-big-gangs``, seed 1: 385 of the month's 711 reserved hours held
    by holds passed on before their gang started)."""
    return guaranteed and keepable(keep, p, floor_gpus) and may_hold(p, guaranteed, waited_s)


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
    """A reservation within one pass: ``holder`` gets ``nodes`` (indices) at ``at``; a debug job
    that yields (``allow_for``'s ``may_yield``) may use them if its protection ends by
    ``yield_by`` -- ``at``, or for a hold kept by its holder (``KeptHolds``, knob ``keep_hold``)
    its first planned start plus the debug threshold when that is later.  Read-only
    by convention; a plain slotted class rather than a frozen dataclass, because every round
    makes one and ``allow_for`` reads it per candidate, and under mypyc a frozen dataclass's
    ``__init__`` runs as interpreted Python (``preemption.retry.SearchState``).  Never hashed
    or compared: the searches key their memo by ``nodes``.  ``admit`` is its filter
    (``Unreserved``), the one object ``allow_for`` returns for every candidate it restricts."""

    __slots__ = ("admit", "at", "floor", "holder", "nodes", "queue_key", "yield_by")

    def __init__(self, holder: str, nodes: frozenset[int], at: float, queue_key: tuple[int, int, str],
                 yield_by: float = -math.inf, floor: tuple[int, int, str] | None = None) -> None:
        self.holder = holder
        self.nodes = nodes
        self.at = at
        self.yield_by = max(at, yield_by)
        self.queue_key = queue_key  # the holder's queue's place when it was made
        # as a later hold, it binds the queues keyed no better than this (None: ``queue_key``); set
        # only for a claim that binds only over-served teams (knob ``hand_over``, core.hand_over)
        self.floor = floor
        self.admit: NodeFilter = Unreserved(nodes)

    def __repr__(self) -> str:
        return f"Hold({self.holder!r}, {sorted(self.nodes)}, {self.at}, {self.queue_key})"


class Holds:
    """The round's reservations (``Scheduler._decide_holds``), best-ranked first, on disjoint
    nodes: at most ``Policy.reservations`` of them, one per queue.  A second gang drains its own
    nodes while the first still waits, instead of waiting for the first to start before its
    nodes even begin to empty (issue 25 item 3: with one reservation, the gangs of
    ``ai2-big-gangs`` held it one after another and spent 98% of their waits not holding it).
    The first (best-ranked) hold binds every start (``allow_for``), of any queue, as the single
    one did; a later one binds only the starts of queues ranked no better than its holder's
    (``binding``): a better-ranked team is never delayed by a worse-ranked team's gang, as in
    Slurm's backfill, which plans jobs in priority order.  Binding every queue cost every other
    kind of work (``ai2-big-gangs``, seed 3: debug p90 165 -> 532 s, batch p90 1,574 ->
    4,804 s) for a gang that was not next.  Made anew every round; read-only by convention
    (``without``/``replaced`` make new ones)."""

    __slots__ = ("_filters", "_rooms", "by_holder", "by_queue", "floored", "items", "latest", "nodes")

    def __init__(self, items: tuple[Hold, ...]) -> None:
        self.items = items
        # a hold binds fewer queues than its rank says (``Hold.floor``): no shortcut for one hold
        self.floored = any(h.floor is not None for h in items)
        self.by_holder: dict[str, Hold] = {h.holder: h for h in items}
        self.by_queue: dict[str, Hold] = {h.queue_key[2]: h for h in items}
        self._filters: dict[int, Unreserved] = {}  # the filter of each set of holds (a bit mask)
        self._rooms: dict[int, tuple[frozenset[int], float]] = {}  # their nodes and last start, by mask
        # every reserved node, and the last reservation's start
        self.nodes, self.latest = self.closed((1 << len(items)) - 1)

    def __repr__(self) -> str:
        return f"Holds({list(self.items)})"

    def without(self, holder: str) -> Holds | None:
        """These holds less ``holder``'s (it started), or None if none is left."""
        rest = tuple(h for h in self.items if h.holder != holder)
        return Holds(rest) if rest else None

    def replaced(self, new: Hold) -> Holds:
        """These holds with ``new.holder``'s re-planned as ``new`` (binding the queues it bound)."""
        old = self.by_holder.get(new.holder)
        if old is not None and old.floor is not None:
            new.floor = old.floor  # ``new`` is the holder's fresh plan (``Scheduler._hold_for``), not shared
        return Holds(tuple(new if h.holder == new.holder else h for h in self.items))

    def binding(self, qk: tuple[int, int, str]) -> int:
        """The holds that bind a start of the queue whose round key is ``qk``, as a bit mask:
        the first always, a later one if ``qk`` ranks no better than its holder's queue."""
        mask = 1 if self.items[0].floor is None or qk >= self.items[0].floor else 0
        for k in range(1, len(self.items)):
            h = self.items[k]
            if qk >= (h.queue_key if h.floor is None else h.floor):
                mask |= 1 << k
        return mask

    def closed(self, mask: int) -> tuple[frozenset[int], float]:
        """The nodes of the holds in ``mask`` and the latest of their starts, or of the protection
        ends a yielding debug job may have on them (``yield_by``; ``walk.Room``: a bound); one
        hold's are its very node set (the searches' memos compare node sets by identity first)."""
        got = self._rooms.get(mask)
        if got is None:
            nodes: frozenset[int] | None = None
            latest = -math.inf
            for k, h in enumerate(self.items):
                if mask >> k & 1:
                    nodes = h.nodes if nodes is None else nodes | h.nodes
                    latest = max(latest, h.yield_by)
            got = self._rooms[mask] = (frozenset() if nodes is None else nodes, latest)
        return got

    def others(self, holder: str) -> frozenset[int]:
        """The nodes of every hold but ``holder``'s (where its re-planned hold may not go)."""
        mask = 0
        for k, h in enumerate(self.items):
            if h.holder != holder:
                mask |= 1 << k
        return self.closed(mask)[0]

    def admit_if_overrun(self, holder: str, end: float, qk: tuple[int, int, str], yielding: bool = False) -> NodeFilter | None:
        """The nodes a job of id ``holder``, of the queue keyed ``qk``, that would run until
        ``end`` may start on: all but those of the holds (not its own) that bind it and whose
        start it would overrun -- for a job that yields (``yielding``, ``end`` its protection's),
        whose ``yield_by`` it would overrun; None: any node."""
        if len(self.items) == 1 and not self.floored:
            h = self.items[0]
            return None if h.holder == holder or end <= (h.yield_by if yielding else h.at) else h.admit
        binds = self.binding(qk)
        mask = 0
        last: Hold | None = None
        for k, h in enumerate(self.items):
            if binds >> k & 1 and h.holder != holder and end > (h.yield_by if yielding else h.at):
                mask |= 1 << k
                last = h
        if last is None:
            return None
        if mask & (mask - 1) == 0:
            return last.admit  # one hold binds: its own filter, the very object
        got = self._filters.get(mask)
        if got is None:
            got = self._filters[mask] = Unreserved(self.closed(mask)[0])
        return got


def allow_for(holds: Holds | None, p: Pend, now: float, qk: tuple[int, int, str], may_yield: bool = False) -> NodeFilter | None:
    """The nodes ``p`` may start on while ``holds`` stand (None: any).  A holder may use its own
    reservation's nodes; unallocated work (it yields at once) every node; any other job may use
    a reservation's nodes only if it is expected to end before that reservation starts, or if
    the reservation does not bind its queue (``qk``: ``Holds.binding``).
    ``may_yield`` (``Starting.may_yield``: a debug job, in a mode where a reservation may evict
    it): a job whose *protection* ends by the reservation's start (``Hold.yield_by``: for a kept
    hold, by its first planned start plus the debug threshold) may use them too, and then
    yields to it (``yields``).  The scheduler grants that filter only to a start on free GPUs or
    in place of unallocated work -- never one that evicts allocated work, which would be lost
    twice."""
    if holds is None or p.mr <= 0:
        return None
    left = max(0.0, p.work - p.done_work)
    return holds.admit_if_overrun(p.jid, now + (min(p.mr, left) if may_yield else left), qk, may_yield)


def admitted(hosts: list[int], allow: NodeFilter | None) -> list[int]:
    """The nodes of ``hosts`` that ``allow`` admits, in their order (``hosts`` itself for no
    filter).  A filter of ``allow_for`` is an ``Unreserved``: its nodes are left out by a set
    test, not by a call per node, which under mypyc is a generic call of a callable object
    (172,576 of them from the cap searches alone in a 3-day ``ai2`` run)."""
    if allow is None:
        return hosts
    if isinstance(allow, Unreserved):
        held = allow.nodes
        return [i for i in hosts if i not in held]
    return [i for i in hosts if allow(i)]


def held_nodes(allow: NodeFilter | None) -> frozenset[int] | None:
    """The reserved nodes a filter of ``allow_for`` keeps a job off (None: no filter): what the
    failed-search memos key a search by (``core.preemption.retry``)."""
    return allow.nodes if isinstance(allow, Unreserved) else None


def evicts_for_hold(knob: str, p: Pend, session: bool, borrows: bool) -> bool:
    """With the knob ``hold_evicts`` (not "off"): does the allocated job ``p``, starting now,
    yield to any reservation once its protection ends, wherever it runs?  Resumable work that is
    not a session: what its eviction throws away is bounded by its checkpoints, and a session is
    a person's.  With "all", any such job; with "borrowed", one that ``borrows`` (takes its team
    above what it is owed: it runs on capacity fair share lends); with "gangs", a gang that
    borrows.  Then ``NodeEnds`` counts its nodes free at its protection's end, so a hold drains
    by the protections on its nodes, not by their work, and a tier-0 holder evicts it then
    (victim rule ``reservation``) -- Ai2's "interrupt many jobs at once to place a large
    pending workload", within the minimum-runtime contract.  An experiment, off by default: on
    ``ai2-big-gangs`` (stop 43) "all" cut the large-job p90 by a third and more but raised every
    other team's debug p90 from 10 s to over 1,000 s; single-node work or gangs alone moved the
    large-job p90 little (docs/results.md).  A job already evicted once (by any rule) does not
    yield again: at most once, or two jobs of one team could take turns for ever, each holding
    while the other yields at its protection's end (stop 48; docs/design/reservation.md)."""
    if p.mr <= 0 or not p.resumable or session or p.evicted_by is not None:
        return False
    return knob == "all" or (borrows and (knob == "borrowed" or (knob == "gangs" and p.n > 1)))


def yields(holds: Holds | None, p: Pend, now: float, placement: tuple[tuple[int, int], ...], may_yield: bool,
           qk: tuple[int, int, str]) -> bool:
    """Does ``p``, starting now on ``placement``, yield to reservations once its protection ends?
    Yes when it may yield, lands on a node a hold (not its own) that binds its queue (``qk``)
    reserves and would still run when that reservation starts."""
    if not may_yield or holds is None or p.mr <= 0:
        return False
    end = now + max(0.0, p.work - p.done_work)
    binds = holds.binding(qk)
    for k, h in enumerate(holds.items):
        if binds >> k & 1 and h.holder != p.jid and end > h.at and any(i in h.nodes for i, _ in placement):
            return True
    return False


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
            drop_numbered(self.busy, (old, i))
        if end == -math.inf:
            self.idle.add(i)
        else:
            insort_numbered(self.busy, (end, i))
        self.end[i] = end

    def started(self, r: Run) -> None:
        if r.allocated:
            at = r.frees_at()
            for i, _ in r.placement:
                if at > self.end[i]:
                    self.set_end(i, at)

    def stopped(self, r: Run, pool: NodePool, running: dict[str, Run]) -> None:
        """After ``r`` left the pool: recompute its nodes from the jobs still there (the latest
        ``frees_at`` of the allocated ones, -inf for none).  A plain loop over a ``dict``: under
        mypyc ``max`` over a generator and a ``Mapping``'s ``[]`` are generic calls."""
        if r.allocated:
            for i, _ in r.placement:
                end = -math.inf
                for j in pool.jobs[i]:
                    o = running[j]
                    if o.allocated:
                        at = o.frees_at()
                        if at > end:
                            end = at
                self.set_end(i, end)


def plan_hold(
    pool: NodePool, ends: NodeEnds, holder: str, gpu_type: str | None, n: int, per: int, now: float, key: tuple[int, int, str],
    taken: frozenset[int] = frozenset(),
) -> Hold | None:
    """The ``n`` nodes that can hold ``per`` GPUs soonest, and when (never before ``now``): the
    ``n`` smallest (free at, node) over the hosts not ``taken`` (by better-ranked holds), where a
    node with ``per`` free or no allocated job is free at -inf -- taken as those in node order,
    then the soonest-ending others."""
    hosts = pool.hosts(per, gpu_type)
    ok = pool.host_flags(per, gpu_type)
    # ``taken`` is tested only where a node is looked at, not copied into ``ok`` for every node
    # (that copy and a count over every host were two thirds of this function: 4,748 plans in a
    # 3-day ``ai2`` run, each over every node)
    # plain loops, not ``sum`` or ``set.update`` over generators: under mypyc those iterate a
    # generator object generically (a sixth of this function in a 27-day Philly-shaped run)
    usable = len(hosts)
    for i in taken:
        if ok[i]:
            usable -= 1
    if usable < n:
        return None
    soon_set: set[int] = set()
    for i in ends.idle:
        if ok[i] and i not in taken:
            soon_set.add(i)
    for i in pool.free_at_least(per):
        if ok[i] and i not in taken:
            soon_set.add(i)
    soon = sorted(soon_set)
    if len(soon) >= n:
        return Hold(holder, frozenset(soon[:n]), now, key)
    chosen, last = soon, -math.inf
    for e, i in ends.busy:  # every host not soon is here: its job ends at e
        if ok[i] and i not in soon_set and i not in taken:
            chosen.append(i)
            last = e
            if len(chosen) == n:
                break
    return Hold(holder, frozenset(chosen), max(now, last), key)
