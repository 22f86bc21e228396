"""What the fast walk keeps between the questions a pass asks, and when it forgets it: the one
place where the scheduler's caches and their guards live, so that ``core.scheduler`` and
``core.starting`` read as the rules they carry out.

``Memos`` is the interface and the reference's implementation: it keeps nothing, so each
question is answered by its plain definition every time (``walk.REFERENCE``, ``--no-skip``, and
``walk.UNKEPT``).  ``Kept`` is the fast walk's (``walk.FAST``): every answer it gives is one the
reference computes again, kept under a key and guards that change whenever something it read
changed.  Each memo has a targeted property test against the reference and a mutation check
of its guards (``docs/design/memos.md``); ``tests/sim/test_walk_equivalence.py`` is the
end-to-end check.  ``memos_for(walk)`` picks one.

A memo is asked in one of two ways.  Where the answer is a rule's (a queue's round key, the
pass inputs, the walk's ``Room``, the scorer, the victim view), the scheduler asks the memo
first (``None``: not kept) and hands a fresh answer back (``keep_*``), which the reference drops.
Where the memo also changes how the answer is computed (a reservation plan made once per shape
off the time and clamped to it; the session pool's kept bound), the memo computes it and the
reference makes it by definition.

What is kept (see each method): the pass inputs (``inputs_id`` counts their recomputations: the
memos below that read them key on it); each queue's round key; reservation plans by shape, and
the reserved node sets as one object each; the reported ``Reservation`` records; the last
``Room``; the last ``Scorer``; the victim view and its inner memo (``VictimView.memo``); failed
cap searches; the active boosts of the last epoch; each queue's candidate order
(``core.candidates``); failed victim searches (``core.preemption.retry``, kept as the table
``failed``; their reuse is ``Starting.victims_for``'s, through ``still_fails`` and its kin).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from allotment.core.boosts import BoostIndex, BoostsAt, active_boosts
from allotment.core.candidates import CandidateOrders
from allotment.core.cluster import ClusterState
from allotment.core.context import Context
from allotment.core.decisions import Reservation
from allotment.core.dependant_list import DependantList
from allotment.core.fairshare import LeafRank
from allotment.core.pass_inputs import PassInputs, QueueKey
from allotment.core.placement import NodeFilter, NodePool
from allotment.core.preemption.kept_pick import KeptPick
from allotment.core.preemption.retry import (
    FailedSearches,
    NodeLog,
    SearchState,
    same_nodes,
)
from allotment.core.preemption.terms import Donor
from allotment.core.preemption.victims import search_donors, still_bare, still_fails, still_picks
from allotment.core.preemption.view import NoVictims, VictimView
from allotment.core.priority import Scorer
from allotment.core.reservation import Hold, Holds, NodeEnds, plan_hold
from allotment.core.session_pool import SessionPool
from allotment.core.state import Pend, Run
from allotment.core.walk import Room, WalkPolicy

# what the pass inputs hold beyond the time: owed, Fair Tree ranks and their index, reclaim measures
InputsVal = tuple[dict[str, float], tuple[LeafRank, ...], dict[str, int], dict[str, float]]
# a reported reservation's identity: (holder, nodes, start) of each hold
ReservedKey = tuple[tuple[str, frozenset[int], float], ...]

_MOST_NODE_SETS = 4096  # more interned reserved node sets than this: start again
_MOST_TOUCHED = 512  # more nodes touched since a failed pick than this: search again (kept_pick)


class KeptKey:
    """A queue's round key, its order as one integer, and the allocated GPUs of its account
    they were computed for (``Scheduler._round_key``)."""

    __slots__ = ("alloc", "key", "order")

    def __init__(self, alloc: int, key: QueueKey, order: int) -> None:
        self.alloc, self.key, self.order = alloc, key, order


class _CapFailure:
    """A cap search of ``job`` that found nothing, kept off the reserved nodes ``held``, when
    ``released`` and its team's ``own_growth`` were these and its team ran ``beyond`` a cap with
    the debug overdraft's yield on or not (``core.debug_overdraft``; the pass inputs: the whole
    table's).  Keyed by the job id alone, one per job: a string key's hash is kept, a tuple's is not."""

    __slots__ = ("beyond", "held", "job", "own", "released")

    def __init__(self, job: Pend, held: frozenset[int] | None, released: int, own: int, beyond: bool) -> None:
        self.job, self.held, self.released, self.own, self.beyond = job, held, released, own, beyond


class Memos:
    """The interface, and the reference: keeps nothing.  ``keeps`` says whether answers are kept
    at all (what the scorer's own per-job memo, ``Scorer(memo=...)``, and a victim search's
    failed pick, ``kept_pick``, follow); ``orders`` and ``failed`` are the kept candidate orders
    and failed searches (None: none kept)."""

    keeps = False

    def __init__(self, ctx: Context, grown: NodeLog) -> None:
        self.ctx = ctx
        self.inputs_id = 0  # bumped whenever the pass inputs are recomputed
        self.orders: CandidateOrders | None = None
        self.failed: FailedSearches | None = None

    # -- the pass inputs (``Scheduler.inputs``) --------------------------------------------------
    def inputs(self, t: float, usage: Mapping[str, float], healthy: int) -> InputsVal | None:
        """The inputs kept for epoch ``t``, the usage mapping ``usage`` (by identity: a window's
        usage changes only as a new mapping) and ``healthy`` GPUs; None: not kept."""
        return None

    def keep_inputs(self, t: float, usage: Mapping[str, float], healthy: int, val: InputsVal) -> None:
        self.inputs_id += 1

    def boosts(self, t: float) -> dict[str, float]:
        """The active boosts at epoch ``t`` (``active_boosts``)."""
        return active_boosts(self.ctx, t)

    def boost_index(self, boosts: Mapping[str, float]) -> BoostIndex | None:
        """The index of ``boosts`` if they are kept ones (None: the scorer makes its own)."""
        return None

    # -- a queue's round key (``Scheduler._round_key``) -------------------------------------------
    def round_key(self, qid: int, alloc: int, names_version: int) -> KeptKey | None:
        """Queue ``qid``'s key, kept for the pass inputs, the queue names (``names_version``) and
        its account's allocated GPUs ``alloc``; None: not kept."""
        return None

    def keep_round_key(self, qid: int, alloc: int, key: QueueKey, order: int) -> KeptKey:
        return KeptKey(alloc, key, order)

    # -- reservation plans (``Scheduler._plan_hold_at``) ------------------------------------------
    def plan_hold(self, pool: NodePool, ends: NodeEnds, p: Pend, now: float, qk: QueueKey, taken: frozenset[int],
                  version: int) -> Hold | None:
        """``plan_hold`` for ``p`` off the nodes ``taken``, on state ``version``."""
        return plan_hold(pool, ends, p.jid, p.gpu_type, p.n, p.per, now, qk, taken)

    # -- the reported reservations (``Scheduler._reservation``) -----------------------------------
    def reservations(self, key: ReservedKey) -> tuple[Reservation, ...] | None:
        """The records last reported for holds of this identity; None: not kept."""
        return None

    def keep_reservations(self, key: ReservedKey, res: tuple[Reservation, ...]) -> None:
        return None

    # -- the walk's room (``Scheduler._room``) ----------------------------------------------------
    def room(self, hs: Holds | None, at: int, now: float) -> Room | None:
        """The ``Room`` kept for the holds ``hs``, the pool's version ``at`` and ``now``; None:
        not kept."""
        return None

    def keep_room(self, hs: Holds | None, at: int, now: float, room: Room) -> None:
        return None

    def lent(self, sp: SessionPool, pool: NodePool, running: dict[str, Run]) -> int:
        """The most GPUs one healthy session-pool node has free or lent (``SessionPool.room``)."""
        return sp.fresh_room(pool, running)

    # -- the pass's scorer (``Scheduler._scorer``) ------------------------------------------------
    def scorer(self, pi: PassInputs, max_free: int, deps: Mapping[str, DependantList]) -> Scorer | None:
        """The scorer kept for the pass ``pi`` (the object), the best node's free GPUs and the
        dependants map (by identity); None: not kept."""
        return None

    def keep_scorer(self, pi: PassInputs, max_free: int, deps: Mapping[str, DependantList], s: Scorer) -> None:
        return None

    # -- the victim view (``Starting.victim_view``) -----------------------------------------------------
    def view(self, version: int) -> VictimView | None:
        """The view kept for state ``version`` and the pass inputs; None: not kept."""
        return None

    def keep_view(self, version: int, v: VictimView) -> None:
        return None

    def view_memo(self) -> dict[str, Any] | None:
        """A fresh view's inner memo (``VictimView.memo``; None: it keeps nothing)."""
        return None

    # -- failed cap searches (``Starting.cap_preempt``) -------------------------------------------
    def cap_failed(self, p: Pend, held: frozenset[int] | None, released: int, own: int, beyond: bool) -> bool:
        """Did a cap search for ``p`` fail in these pass inputs, off the same reserved nodes, while
        no job stopped and no node's health changed (``released``), none of its team's own jobs
        became preemptible (``own``) and its team was beyond a cap with the overdraft's yield on
        as now (``beyond``: a start may make the team's debug jobs yield, ``core.debug_overdraft``)?"""
        return False

    def keep_cap_failure(self, p: Pend, held: frozenset[int] | None, released: int, own: int, beyond: bool) -> None:
        return None


    # -- failed victim searches (``Starting.victims_for``; ``core.preemption.retry``) -----------
    # a search of unallocated work only is remembered by the job's shape (``Pend.shape``: GPUs, n,
    # per, type) and the reserved nodes: it reads nothing else of the job; any other by the job and
    # its terms (``FailedSearches.find``).  A search reads the reservation only through ``allow``,
    # i.e. its nodes: keyed by the node set, not the ``Hold`` (which every round makes anew)
    def still_failed(self, st: ClusterState, view: VictimView, p: Pend, pi: PassInputs, qk: QueueKey,
                     allow: NodeFilter | None, only_unallocated: bool, shape: int, reserve: bool,
                     held: frozenset[int] | None, debug_end: float | None) -> bool:
        """Did this very search fail before, and does that still hold on ``st`` now?  (``shape``:
        the job's shape for a search of unallocated work only, which reads nothing else of it,
        else -1; ``held``: the reserved nodes ``allow`` keeps it off; ``debug_end``:
        ``Starting.debug_end``.)  If it is still sure to fail after growth on some nodes, that is
        remembered as of now."""
        return False

    def pick_keeper(self, shape: int) -> list[KeptPick] | None:
        """Where a search puts its failed pick (``find_victims``'s ``keep``; None: not kept)."""
        return None

    def keep_failure(self, st: ClusterState, view: VictimView, p: Pend, pi: PassInputs, qk: QueueKey, shape: int,
                     held: frozenset[int] | None, reserve: bool, why: NoVictims, keep: list[KeptPick] | None,
                     debug_end: float | None) -> None:
        """Remember that this search found nothing (``why``), with its failed pick if ``keep`` got one."""
        return None


class Kept(Memos):
    """The fast walk's memos: each method's guards are the ones ``docs/design/memos.md`` lists."""

    keeps = True

    def __init__(self, ctx: Context, grown: NodeLog) -> None:
        super().__init__(ctx, grown)
        self.orders = CandidateOrders()  # each queue's score order (core.candidates)
        # victim searches that failed, and on what (core.preemption.retry)
        self._failed = FailedSearches(grown)
        self.failed = self._failed
        self._inputs_key: tuple[float, Mapping[str, float], int] | None = None  # holds the mapping
        self._inputs_val: InputsVal | None = None
        self._boosts = BoostsAt(ctx)  # the active boosts of the last epoch, and their index
        self._qkeys: list[KeptKey | None] = []  # per queue id, its account's GPUs and key ...
        self._qkeys_inputs = -1  # ... for these inputs (inputs_id) ...
        self._qkeys_names = -1  # ... and queue names (QueueSet.names_version)
        self._holds: dict[tuple[str | None, int, int, frozenset[int]], Hold | None] = {}
        self._holds_at = -1
        # the reserved node sets planned so far, each as one object: the failed-search memos
        # (core.preemption.retry) compare a search's node set first by identity, then by value
        self._node_sets: dict[frozenset[int], frozenset[int]] = {}
        self._res_key: ReservedKey | None = None
        self._res_val: tuple[Reservation, ...] = ()
        self._room_holds: Holds | None = None  # the last Room, and the holds object (held here so
        self._room_at = -1  # that no other can take its place), the pool's version and the time
        self._room_now = math.nan
        self._room_val: Room | None = None
        self._scorer_pi: PassInputs | None = None  # the last Scorer, and what it was made from
        self._scorer_max_free = -1
        self._scorer_deps: Mapping[str, DependantList] | None = None
        self._scorer_val: Scorer | None = None
        self._view_val: VictimView | None = None  # the victim view of state _view_version, inputs _view_inputs
        self._view_version = -1
        self._view_inputs = -1
        # cap searches that failed in these pass inputs (``_cap_failed_at``), by job id: the last one
        self._cap_failed: dict[str, _CapFailure] = {}
        self._cap_failed_at = -1

    def inputs(self, t: float, usage: Mapping[str, float], healthy: int) -> InputsVal | None:
        k = self._inputs_key
        if k is not None and k[0] == t and k[1] is usage and k[2] == healthy and self._inputs_val:
            return self._inputs_val
        return None

    def keep_inputs(self, t: float, usage: Mapping[str, float], healthy: int, val: InputsVal) -> None:
        self._inputs_key, self._inputs_val = (t, usage, healthy), val
        self.inputs_id += 1

    def boosts(self, t: float) -> dict[str, float]:
        return self._boosts.at(t)

    def boost_index(self, boosts: Mapping[str, float]) -> BoostIndex | None:
        return self._boosts.index(boosts)

    def round_key(self, qid: int, alloc: int, names_version: int) -> KeptKey | None:
        if self._qkeys_inputs != self.inputs_id or self._qkeys_names != names_version:
            self._qkeys, self._qkeys_inputs, self._qkeys_names = [], self.inputs_id, names_version
            return None
        keys = self._qkeys
        if qid >= len(keys):
            return None
        got = keys[qid]
        return got if got is not None and got.alloc == alloc else None

    def keep_round_key(self, qid: int, alloc: int, key: QueueKey, order: int) -> KeptKey:
        keys = self._qkeys  # round_key, asked first, emptied it if the inputs or names moved
        while len(keys) <= qid:
            keys.append(None)
        got = keys[qid] = KeptKey(alloc, key, order)
        return got

    def plan_hold(self, pool: NodePool, ends: NodeEnds, p: Pend, now: float, qk: QueueKey, taken: frozenset[int],
                  version: int) -> Hold | None:
        # the nodes and their free times depend only on the state: planned once per shape from
        # -inf, and the start clamped to ``now``
        if self._holds_at != version:
            self._holds, self._holds_at = {}, version
        k = (p.gpu_type, p.n, p.per, taken)
        if k not in self._holds:
            h = plan_hold(pool, ends, "", p.gpu_type, p.n, p.per, -math.inf, qk, taken)
            if h is not None:  # equal node sets as one object: the searches' memos compare them
                h = Hold("", self._node_sets.setdefault(h.nodes, h.nodes), h.at, qk)
                if len(self._node_sets) > _MOST_NODE_SETS:
                    self._node_sets = {h.nodes: h.nodes}
            self._holds[k] = h
        h = self._holds[k]
        return None if h is None else Hold(p.jid, h.nodes, max(now, h.at), qk)

    def reservations(self, key: ReservedKey) -> tuple[Reservation, ...] | None:
        return self._res_val if self._res_key is not None and self._res_key == key else None

    def keep_reservations(self, key: ReservedKey, res: tuple[Reservation, ...]) -> None:
        self._res_key, self._res_val = key, res

    def room(self, hs: Holds | None, at: int, now: float) -> Room | None:
        if self._room_val is not None and self._room_holds is hs and self._room_at == at and self._room_now == now:
            return self._room_val
        return None

    def keep_room(self, hs: Holds | None, at: int, now: float, room: Room) -> None:
        # kept only while the holds bind every queue alike (none, or one without a floor): else
        # the room depends on the queue asking (``Holds.binding``), and ``room`` never finds these holds
        if hs is not None and (len(hs.items) != 1 or hs.floored):
            return
        self._room_holds, self._room_at, self._room_now, self._room_val = hs, at, now, room

    def lent(self, sp: SessionPool, pool: NodePool, running: dict[str, Run]) -> int:
        return sp.room(pool, running)

    def scorer(self, pi: PassInputs, max_free: int, deps: Mapping[str, DependantList]) -> Scorer | None:
        if self._scorer_pi is pi and self._scorer_max_free == max_free and self._scorer_deps is deps:
            return self._scorer_val
        return None

    def keep_scorer(self, pi: PassInputs, max_free: int, deps: Mapping[str, DependantList], s: Scorer) -> None:
        self._scorer_pi, self._scorer_max_free, self._scorer_deps, self._scorer_val = pi, max_free, deps, s

    def view(self, version: int) -> VictimView | None:
        if self._view_version == version and self._view_inputs == self.inputs_id:
            return self._view_val
        return None

    def keep_view(self, version: int, v: VictimView) -> None:
        self._view_val, self._view_version, self._view_inputs = v, version, self.inputs_id

    def view_memo(self) -> dict[str, Any] | None:
        return {}

    def cap_failed(self, p: Pend, held: frozenset[int] | None, released: int, own: int, beyond: bool) -> bool:
        if self._cap_failed_at != self.inputs_id:
            self._cap_failed, self._cap_failed_at = {}, self.inputs_id
            return False
        was = self._cap_failed.get(p.jid)
        return (was is not None and was.job is p and was.released == released and was.own == own
                and was.beyond == beyond and same_nodes(was.held, held))

    def keep_cap_failure(self, p: Pend, held: frozenset[int] | None, released: int, own: int, beyond: bool) -> None:
        self._cap_failed[p.jid] = _CapFailure(p, held, released, own, beyond)  # cap_failed, asked first, cleared it

    def _kept_pick(self, st: ClusterState, keep: list[KeptPick] | None, debug_end: float | None) -> KeptPick | None:
        """The search's failed pick (``kept_pick``), tied to the state it read (``debug_end``:
        the one input it reads of the time, ``Starting.debug_end``)."""
        if not keep:
            return None
        k = keep[0]
        k.inputs, k.debug_end, k.touched, k.grown = self.inputs_id, debug_end, st.touched.mark(), st.grown.mark()
        return k

    def _remember(self, shape: int, p: Pend, held: frozenset[int] | None, reserve: bool, at: SearchState,
                  why: NoVictims, pick: KeptPick | None = None, donors: dict[str, Donor] | None = None) -> None:
        if shape >= 0:
            self._failed.remember_shape(shape, held, at, why)
        else:
            self._failed.remember(p.jid, held, reserve, p, at, why, pick, donors)

    def _search_state(self, st: ClusterState, pi: PassInputs, qk: QueueKey) -> SearchState:
        return SearchState(self.inputs_id, st.grown.mark(), st.donor_growth, st.version, st.queued_version, pi.now, qk)

    def still_failed(self, st: ClusterState, view: VictimView, p: Pend, pi: PassInputs, qk: QueueKey,
                     allow: NodeFilter | None, only_unallocated: bool, shape: int, reserve: bool,
                     held: frozenset[int] | None, debug_end: float | None) -> bool:
        failed = self._failed
        was = failed.find_shape(shape, held) if shape >= 0 else failed.find(p.jid, held, reserve)
        if was is None:
            return False
        job = None if only_unallocated else p
        inputs = self.inputs_id
        grown = failed.grown_since(was, job, inputs, st.grown.mark(), st.donor_growth, st.version, st.queued_version,
                                   pi.now, qk)
        if grown is None:
            k = was.pick
            if k is not None and was.job is p:  # a failed pick: the same pass, nothing stopped or turned preemptible
                if k.inputs != inputs or k.debug_end != debug_end:
                    return False
                touched, grown = st.touched.since(k.touched), st.grown.since(k.grown)
                if touched is None or grown is None or len(touched) + len(grown) > _MOST_TOUCHED:
                    return False
                if not still_picks(view, p, p.per, pi.owed, pi.measure, k, touched + grown, allow=allow,
                                   reserve=reserve, debug_end=debug_end):
                    return False
                k.touched, k.grown = st.touched.mark(), st.grown.mark()
                self._remember(-1, p, held, reserve, self._search_state(st, pi, qk), was.why, k)
                return True
            if not was.why.bare:
                return False
            grown = failed.bare_grown(was, p)  # no reclaim could pass, nor p's own work free the nodes
            if grown is None:
                return False
            bare = still_bare(view, p, p.n, p.per, pi.owed, pi.measure, grown, allow=allow, reserve=reserve,
                              debug_end=debug_end)
            if bare is None:
                return False
            self._remember(-1, p, held, reserve, self._search_state(st, pi, qk), bare)
            return True
        within = failed.donors_to_check(was, inputs, st.donor_growth)
        if not grown and within is None:
            return True
        still = still_fails(view, p, p.n, p.per, pi.owed, pi.measure, grown, was.why,
                            allow=allow, only_unallocated=only_unallocated, reserve=reserve,
                            debug_end=debug_end, within=within)
        if still is None:
            return False
        self._remember(p.shape if only_unallocated else -1, p, held, reserve, self._search_state(st, pi, qk), still,
                       donors=_donors_read(still, view, p, pi))
        return True

    def pick_keeper(self, shape: int) -> list[KeptPick] | None:
        return [] if shape < 0 else None  # a search of unallocated work only is kept by shape, without a pick

    def keep_failure(self, st: ClusterState, view: VictimView, p: Pend, pi: PassInputs, qk: QueueKey, shape: int,
                     held: frozenset[int] | None, reserve: bool, why: NoVictims, keep: list[KeptPick] | None,
                     debug_end: float | None) -> None:
        self._remember(shape, p, held, reserve, self._search_state(st, pi, qk), why, self._kept_pick(st, keep, debug_end),
                       _donors_read(why, view, p, pi))


def _donors_read(why: NoVictims, view: VictimView, p: Pend, pi: PassInputs) -> dict[str, Donor] | None:
    """The donors a lasting failure that read donors counted (``retry.Failure.donors``)."""
    return search_donors(view, p, pi.owed, pi.measure) if why.lasting and why.reclaim else None


def memos_for(walk: WalkPolicy, ctx: Context, grown: NodeLog) -> Memos:
    """The fast walk's memos if ``walk`` reuses answers, else the reference's (none)."""
    return Kept(ctx, grown) if walk.reuses else Memos(ctx, grown)
