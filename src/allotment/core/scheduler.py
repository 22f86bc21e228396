"""The scheduling pass: ``Scheduler.run_pass(now, usage) -> Decisions``.  Pure: no clock, no I/O,
no randomness; every ordering ends in a stable tie-break (job id, node order).  A pass is a
function of the state, ``now`` and the window usage; nothing it remembers changes a later pass,
but for the holds kept by their holders with the knob ``keep_hold`` (``kept``).

A pass, step by step:

1. protections that ended by ``now`` make their jobs preemptible (``core.contract``);
2. unhealthy nodes drain (``core.drain``);
3. the pass's inputs: the epoch (``core.epoch``), what each account is owed now, the Fair Tree
   ranks and reclaim measures over the window usage (``core.fairshare``), active boosts;
4. rounds until a round decides nothing (a fixpoint, so a second pass at the same time and state
   decides nothing).  A round walks the queues best first -- tier (``core.tiers``), then Fair Tree
   rank -- and each visit offers the queue's ``queue_depth`` best candidates by the whole
   within-team score over the whole queue (``core.priority``): the first that fits starts
   (``core.placement``); the first blocked one may preempt (``core.preemption``) or, if a gang
   (or a starving whole-node job of an under-served team), hold the reservation
   (``core.reservation``); any later blocked allocated one may still take unallocated work.
   Every start, through preemption too, keeps off reserved nodes it would overrun
   (``core.reservation.allow_for``); how a start is carried out is ``core.starting``'s.  A queue
   that started something is visited again; one where nothing could start is done for the
   round.  Which queues a round must visit is the walk policy's (``core.walk``): the reference
   visits all, the fast one skips provably idle ones; what it keeps between questions is
   ``memo``'s (``core.fast_walk``), asked first and handed each fresh answer.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Mapping

from allotment.core.candidates import REBUILD, REFIT
from allotment.core.cluster import ClusterState
from allotment.core.context import Context
from allotment.core.decisions import Decisions, NodeReport, Preemption, Ranked, Reservation, Start
from allotment.core.drain import drain
from allotment.core.epoch import epoch_of, next_epoch
from allotment.core.fairshare import LeafRank, rank_leaves, reclaim_measure
from allotment.core.fast_walk import KeptKey, Memos, memos_for
from allotment.core.hand_over import claim_floor, keeps_claim, keeps_first
from allotment.core.inherited import DependantFactsCache
from allotment.core.pass_inputs import PassInputs, QueueKey
from allotment.core.placement import NodeFilter
from allotment.core.preemption.view import Victim
from allotment.core.priority import Scorer
from allotment.core.queues import Queue
from allotment.core.reservation import (
    Hold,
    Holds,
    allow_for,
    held_nodes,
    keepable,
    keeps,
    may_hold,
)
from allotment.core.snapshot import KeptHold, NodeState
from allotment.core.starting import Starting
from allotment.core.state import Pend
from allotment.core.tiers import GUARANTEED
from allotment.core.usage import WindowView
from allotment.core.usage_crossings import next_crossing
from allotment.core.walk import FAST, REFERENCE, UNKEPT, Room, WalkPolicy
from allotment.core.weights import ScoreWeights

__all__ = ["PassInputs", "QueueKey", "Scheduler"]

NOTHING = Decisions()  # what a pass that decides nothing returns (immutable, so shared)
GANG_WHY = "highest-ranked blocked {what} ({gpus} GPUs); smaller jobs backfill only if they end first"
STARVING_WHAT = "starving job of an under-served team, waiting over 1 h"


class Scheduler:
    """The pass, built from collaborators rather than parent classes: it *holds* the cluster's
    state (``state``: pool, accounting, running and pending jobs, and the only mutations of
    them, ``core.cluster``), the fast walk's memo (``memo``, ``core.fast_walk``; the reference's
    keeps nothing) and the part that carries a start out (``starting``, ``core.starting``), which
    is given the same state and memo.  The scheduler decides which job to offer and when; the
    state says what is; ``starting`` says how a chosen job starts.  Drivers change the state
    through ``state`` (``add_pending``, ``finish``, ``set_health``, ...) and ask the scheduler
    for a pass.  (Under mypyc ``self.state.x`` is one load more than the tower's ``self.x``,
    the inner reference borrowed; a local costs a reference count taken and dropped, so only
    ``_visit``, whose loop reads the state per candidate, and ``run_pass`` bind the parts to
    locals; stop 47's callgrind counts, docs/benchmarks.md.)"""

    def __init__(self, ctx: Context, nodes: tuple[NodeState, ...], *, walk: WalkPolicy = FAST) -> None:
        # kept orders: fixed only; the other derivations' fast walk visits as the reference does
        walk = walk if ctx.policy.priority_weights.mode == "fixed" else UNKEPT if walk.merges else REFERENCE
        self.state = ClusterState(ctx, nodes)
        self.walk = walk
        # read-only, the state's own (a mode and a policy never change): held here too
        self.ctx, self.policy, self.mode = ctx, self.state.policy, self.state.mode
        # what the fast walk keeps, and when it forgets it (core.fast_walk; the reference keeps nothing)
        self.memo: Memos = memos_for(walk, ctx, self.state.grown)
        self.starting = Starting(self.state, self.memo)
        self.ranks: tuple[LeafRank, ...] = ()  # the last pass's Fair Tree ranks (reported)
        # the last pass inputs' usage and what each account is owed (``_usage_crossing``)
        self._last_usage: Mapping[str, float] | None = None
        self._last_owed: dict[str, float] = {}
        self._facts = DependantFactsCache(self.state.acct.user_gpus)  # what scoring reads of dependants, copied once
        self._weights = ScoreWeights(ctx.policy.priority_weights)  # the score's weights, read once
        self._max_holds = max(1, int(ctx.policy.reservations))
        # knob keep_hold: each kept holder and its hold's first planned start (core.reservation.keeps),
        # the one fact a pass leaves to the next (decide() reads it from Snapshot.kept_holds)
        self._keep = str(ctx.policy.keep_hold)
        self._keep_floor = float(ctx.policy.keep_hold_min_fraction) * ctx.capacity_gpus  # GPUs a kept holder asks
        self.kept: dict[str, float] = {}
        # knob hand_over (core.hand_over): with keep_hold off, ``kept`` remembers the last round's holders
        self._hand = str(ctx.policy.hand_over) if self._keep == "off" else "off"
        # how far past its first planned start a kept hold lets yielding debug jobs run (None: not at all)
        self._kept_slack = (float(ctx.policy.debug_threshold_s) if self._keep != "off" and ctx.policy.kept_hold_debug
                            else None)

    def run_pass(self, now: float, usage: Mapping[str, float]) -> Decisions:
        state, starting = self.state, self.starting
        starts: list[Start] = []
        preemptions: list[Preemption] = []
        starting.begin_pass()
        # 1. protections that ended
        state.expire_protections(now)

        # 2. drain unhealthy nodes
        def evict(jid: str, why: str) -> None:
            if not (starting.graces and starting.must_wait_for_grace(jid, None, "drain", why, now)):  # core.session_grace
                preemptions.append(state.evict(jid, now, None, "drain", why))

        reports: tuple[NodeReport, ...] = ()
        if state.unhealthy_since:
            reports = drain(state.pool, state.running, state.acct.preemptible, state.unhealthy_since,
                            self.policy.human_drain_threshold_s, evict,
                            self.policy.non_resumable == "run_to_completion")
        # 3. the pass's inputs
        pi = self.inputs(now, usage)
        self.ranks = pi.ranks
        # 4. rounds to a fixpoint
        limit = 4 * (len(state.pending) + len(state.running)) + 8
        for _ in range(limit):
            if not self._round(pi, starts, preemptions):
                break
        else:  # pragma: no cover - every decided round lowers a finite measure
            raise AssertionError(f"pass at {now} did not reach a fixpoint")
        res = self._reservation()
        if not (starts or preemptions or res or reports or starting.notices):
            return NOTHING  # most passes: one shared record
        return Decisions(tuple(starts), tuple(preemptions), res, reports, notices=tuple(starting.notices))

    def _reservation(self) -> tuple[Reservation, ...]:
        """The pass's reservations as reported; the fast walk keeps the last pass's records while
        the holds are the same (holder, nodes, start): most passes keep them."""
        hs = self.starting.holds
        if hs is None:
            return ()
        key = tuple((h.holder, h.nodes, h.at) for h in hs.items)
        kept = self.memo.reservations(key)
        if kept is not None:
            return kept
        res = []
        for h in hs.items:
            holder = self.state.pending[h.holder]
            what = "gang" if holder.n > 1 else STARVING_WHAT
            res.append(Reservation(h.holder, tuple(self.state.pool.names[i] for i in sorted(h.nodes)), h.at,
                                   GANG_WHY.format(what=what, gpus=holder.gpus)))
        out = tuple(res)
        self.memo.keep_reservations(key, out)
        return out

    def inputs(self, now: float, usage: Mapping[str, float]) -> PassInputs:
        """Step 3: everything a pass reads that is not the cluster state."""
        t = epoch_of(now, self.policy.fairshare_period_s)
        healthy = self.state.pool.healthy_total
        kept = self.memo.inputs(t, usage, healthy)  # the fast walk's: same epoch, usage mapping, capacity
        if kept is not None:
            owed, ranks, rank_index, measure = kept
        else:
            owed = {leaf: self.state.owed(leaf) for leaf in self.ctx.leaves}
            ranks = ()
            measure = {}
            if self.mode.ranks_queues:
                ranks = rank_leaves(self.ctx, usage)
                measure = {leaf: reclaim_measure(usage.get(leaf, 0.0), e) for leaf, e in owed.items()}
            rank_index = {r.leaf: r.rank for r in ranks}
            self.memo.keep_inputs(t, usage, healthy, (owed, ranks, rank_index, measure))
        self._last_usage, self._last_owed = usage, owed
        load = (self.state.pending_gpus + self.state.running_gpus) / max(1, self.ctx.capacity_gpus)
        return PassInputs(now, t, owed, ranks, rank_index, measure,
                          self.memo.boosts(t), load)

    def wake_at(self, now: float) -> float | None:
        """The next instant after ``now`` at which a pass could decide something new although
        no job arrived or ended and no node changed: a protection ends (while work waits or a
        node drains), or (while work waits) an epoch boundary or a boost expiry without a period.
        Drivers run a pass then; with nothing pending and no drain a pass can decide nothing,
        and the next arrival runs one anyway."""
        # the end of a protection can only matter to waiting work or to a drain
        matters = self.mode.wakes_on_protection and (self.state.pending or self.state.unhealthy_since)
        nxt = self.state.next_protection_end() if matters else math.inf
        if self.state.noticed and (self.state.pending or self.state.unhealthy_since):  # a grace ends: the session may go then
            nxt = min(nxt, self.state.grace_end(now))
        if self.state.pending:
            period = self.policy.fairshare_period_s
            nxt = min(nxt, next_epoch(now, period))
            if period <= 0:
                nxt = min([nxt, *(e for b in self.policy.boosts if (e := self.ctx.boost_expiry_s(b.expires)) > now)])
                nxt = min(nxt, self._usage_crossing(now))
        return nxt if nxt < math.inf else None

    def _usage_crossing(self, now: float) -> float:
        """Period 0: the next instant a usage comparison turns (``core.usage_crossings``), read
        from the last pass's inputs (its usage view and what each account is owed); none when
        usage came as plain numbers (a reconciler's ``decide`` runs every interval anyway) or the
        mode does not rank."""
        if self._last_usage is None or not self.mode.ranks_queues:
            return math.inf
        u, owed = self._last_usage, self._last_owed
        if not isinstance(u, WindowView):
            return math.inf
        return next_crossing(self.ctx, u.trend, owed, float(self.policy.reclaim_hysteresis), now, u.next_break())

    # -- step 4 ------------------------------------------------------------------------------
    def _round_key(self, q: Queue, pi: PassInputs) -> KeptKey:
        """``queue_key`` and its ``_order``, which the fast walk reuses while the pass inputs
        (what each account is owed, the ranks) and the queue names are the same and the queue's
        account runs the same allocated GPUs (``Memos.round_key``)."""
        alloc = self.state.acct.alloc_gpus.get(q.account, 0)
        got = self.memo.round_key(q.qid, alloc, self.state.queues.names_version)
        if got is None:
            key = self.starting.queue_key(q.name, pi)
            got = self.memo.keep_round_key(q.qid, alloc, key, self._order(q, key, pi))
        return got

    def _order(self, q: Queue, key: QueueKey, pi: PassInputs) -> int:
        """``key`` = (tier, rank, name) as one integer with the same order: the name by its
        place among all queue names (``QueueSet.rank``).  Sorting a round's queues by it is a
        sort of integers, not of tuples ending in strings (generic compares under mypyc)."""
        names = len(self.state.queues.queues)
        ranks = len(pi.rank_index) + 1  # a rank is at most len(rank_index): accounts not ranked
        return (key[0] * ranks + key[1]) * names + self.state.queues.rank[q.qid]

    def _round(self, pi: PassInputs, starts: list[Start], preemptions: list[Preemption]) -> bool:
        """One walk over the queues; True if it decided anything.  The reservation is decided
        before the walk (``_decide_holds``), so it binds every start of the round, of better-ranked
        queues and of the holder's own queue too (docs/design/reservation.md)."""
        tried: set[str] = set()
        # the queues still to visit, best key first: order[i:], each key as its integer
        # (``_order``: keys end in their queue, so no two are equal); a sorted list rather than
        # a heap, whose compares per pop cost more under mypyc than one sort and an insort per start
        order = [self._round_key(q, pi).order for q in self.state.queues.nonempty_queues()]
        order.sort()
        names, ranks = len(self.state.queues.queues), len(pi.rank_index) + 1
        self.starting.holds = self._decide_holds(order, names, ranks, pi)
        ranks_names = ranks * names
        by_rank, dealt = self.state.queues.by_rank, self.state.queues.names_version
        i = 0
        decided = False
        while i < len(order):
            o = order[i]
            i += 1
            q = by_rank[o % names]
            if not q.keys:
                continue
            tier = o // ranks_names
            hs = self.starting.holds  # a holder's queue is always visited: it starts there, or re-plans
            h = None if hs is None else hs.by_queue.get(q.name)
            if h is not None and h.holder not in tried:
                cands = self._with_holder(q, self._candidates(q, pi, tried), h)
            else:
                room = self._room(hs, o, names, ranks, pi.now)
                # the walk's bounds read the better of the queue's tier when the round ordered it
                # and its tier now: an eviction earlier in this round (of this team's job) may have
                # put its team below what it is owed, and the victim search reads the state now
                # (until the round decides something the state is the one it ordered the queues by)
                if decided:
                    tier = min(tier, self._round_key(q, pi).key[0])
                if not self.walk.may_visit(q.shapes, tier, q.account, self.state.pool, self.state.acct, self.mode, room):
                    continue
                cands = self._candidates(q, pi, tried)
                if not self.walk.must_visit(cands, q.shapes, tier, q.account, self.state.pool, self.state.acct, self.mode, room):
                    continue
            if self._visit(q, cands, _key_of(o, names, ranks, by_rank), pi, tried, starts, preemptions):
                decided = True
                if self.state.queues.names_version != dealt:
                    # a victim requeued into a queue new to this scheduler (a snapshot's running
                    # job: ``decide``) re-dealt the names: the rest of the order, re-encoded
                    rest = [(_key_of(x, names, ranks, by_rank), by_rank[x % names]) for x in order[i:]]
                    names, by_rank, dealt = len(self.state.queues.queues), self.state.queues.by_rank, self.state.queues.names_version
                    ranks_names = ranks * names
                    order[i:] = sorted([self._order(x, key, pi) for key, x in rest])
                if q.keys:
                    insort(order, self._round_key(q, pi).order, lo=i)
        return decided

    def _room(self, hs: Holds | None, o: int, names: int, ranks: int, now: float) -> Room:
        """``_fresh_room``, which a round asks of every queue it may skip (most of them, most
        rounds), kept by the fast walk while it is the same: the same holds object, none or
        one (then it binds every queue alike: it does not depend on ``o``), the same pool
        (``NodePool.version``, bumped by every change of its free GPUs, jobs or health, which
        is all the bounds and the session pool's room read) and the same ``now`` (``Memos.room``)."""
        at = self.state.pool.version
        room = self.memo.room(hs, at, now)
        if room is None:
            room = self._fresh_room(hs, o, names, ranks, now)
            self.memo.keep_room(hs, at, now, room)
        return room

    def _fresh_room(self, hs: Holds | None, o: int, names: int, ranks: int, now: float) -> Room:
        """What the fast walk's tests read of the reservations that bind the queue of round
        order ``o`` (``walk.Room``, ``Holds.binding``): the most free GPUs off their nodes, and
        the time left before the last of them starts (a job leaving by then may use some
        reserved node: a necessary condition, never more)."""
        sp = self.state.sessions  # the pool's bound, kept per node by the fast walk, by its definition by the reference
        lent = self.memo.lent(sp, self.state.pool, self.state.running) if sp.nodes else 0
        if hs is None:
            return Room(self.state.pool.max_free(), math.inf, lent, self.starting.consolidates)
        if len(hs.items) == 1 and not hs.floored:
            return Room(self.state.pool.max_free_outside(hs.nodes), hs.latest - now, lent, self.starting.consolidates)
        mask = hs.binding(_key_of(o, names, ranks, self.state.queues.by_rank))
        if not mask:  # only claims that bind over-served teams (knob hand_over), and this queue is not one
            return Room(self.state.pool.max_free(), math.inf, lent, self.starting.consolidates)
        nodes, latest = hs.closed(mask)
        return Room(self.state.pool.max_free_outside(nodes), latest - now, lent, self.starting.consolidates)

    def _decide_holds(self, order: list[int], names: int, ranks: int, pi: PassInputs) -> Holds | None:
        """The round's reservations, before its walk: walking the queues in the round's
        ``order``, each queue's holder (``_holder_in``), up to ``Policy.reservations`` of them,
        each on nodes the better-ranked ones did not take.  One that fits free GPUs now holds them
        too (from now): otherwise a start walked before it takes them, and it is overtaken again
        each time nodes free up.  A function of the state alone, like the whole pass: the same
        state gives the same holds, so a reservation moves only when the cluster changed.  With
        the knob ``keep_hold``, the holds kept by their holders (``reservation.keeps``) come
        first, and the state includes what the last round kept (``kept``); with the knob
        ``hand_over`` instead (``core.hand_over``), the fresh holds then pass through ``_handed``,
        which reads the last round's holders (``kept``)."""
        by_rank = self.state.queues.by_rank
        ranks_names = ranks * names
        got: list[Hold] = []
        taken: frozenset[int] = frozenset()
        held: set[str] = set()  # the queues of the kept holds
        for _, kp, key in self._keepers(pi) if self.kept and self._keep != "off" else ():
            h = self._plan_hold(kp, key, pi.now, self._off_pool(kp, taken))
            if h is not None and len(got) < self._max_holds:
                got.append(h)
                held.add(kp.queue)
                taken = h.nodes if not taken else taken | h.nodes
        for o in order:
            if len(got) == self._max_holds:
                break
            q = by_rank[o % names]
            if not q.keys or q.free or q.name in held:
                continue
            p = self._holder_in(q, self.mode.ranks_queues and o // ranks_names == GUARANTEED, pi.t)
            if p is not None:
                h = self._plan_hold(p, _key_of(o, names, ranks, by_rank), pi.now, self._off_pool(p, taken))
                if h is not None:
                    got.append(h)
                    taken = h.nodes if not taken else taken | h.nodes
        if self._keep != "off":
            self.kept = {h.holder: self.kept.get(h.holder, h.at) for h in got
                         if keepable(self._keep, self.state.pending[h.holder], self._keep_floor)}
        elif self._hand != "off":
            if got and self.kept:
                got = self._handed(got, pi)
            self.kept = {h.holder: self.kept.get(h.holder, h.at) for h in got}
        return Holds(tuple(got)) if got else None

    def _handed(self, got: list[Hold], pi: PassInputs) -> list[Hold]:
        """The knob ``hand_over`` (``core.hand_over``) on the round's fresh holds ``got``: the last
        round's holders left out of them that still may hold one, within their caps, in a tier no
        worse than the new first holder's -- the best-ranked of them takes the first hold back when
        the new holder would start later than it (``keeps_first``; the others re-planned off its
        nodes); the rest keep a hold of their own after the others (``keeps_claim``), one per queue."""
        holders = {h.holder for h in got}
        last: list[tuple[int, Pend, QueueKey]] = []
        for jid in self.kept:
            p = self.state.pending.get(jid)
            q = None if p is None or jid in holders else self.state.queues.by_name.get(p.queue)
            if p is None or q is None or q.free or not q.keys or not self.mode.ranks_queues:
                continue
            rk = self._round_key(q, pi)
            if (rk.key[0] <= got[0].queue_key[0] and may_hold(p, rk.key[0] == GUARANTEED, pi.t - p.eligible)
                    and self._within_caps_and_limits(p)):
                last.append((rk.order, p, rk.key))
        if not last:
            return got
        last.sort(key=lambda x: x[0])
        for k, (_, p, key) in enumerate(last):
            h = self._plan_hold(p, key, pi.now, self._off_pool(p, frozenset()))
            if h is not None and keeps_first(self._hand, h.at, got[0].at):
                out, taken = [h], h.nodes
                for g in got[:self._max_holds - 1]:
                    gp = self.state.pending[g.holder]
                    if gp.queue == p.queue:
                        continue
                    r = self._plan_hold(gp, g.queue_key, pi.now, self._off_pool(gp, taken))
                    if r is not None:
                        out.append(r)
                        taken = taken | r.nodes
                got = out
                del last[k]
                break
        if keeps_claim(self._hand):
            taken = frozenset().union(*(h.nodes for h in got))
            queues = {h.queue_key[2] for h in got}
            for _, p, key in last:
                if key[2] in queues:
                    continue
                h = self._plan_hold(p, key, pi.now, self._off_pool(p, taken))
                if h is not None:
                    h.floor = claim_floor(self._hand)
                    got.append(h)
                    queues.add(key[2])
                    taken = taken | h.nodes
        return got

    def _keepers(self, pi: PassInputs) -> list[tuple[int, Pend, QueueKey]]:
        """The last round's holders that keep their holds (``reservation.keeps``), in round order
        (each with its queue's round order and key)."""
        out = []
        for jid in self.kept:
            p = self.state.pending.get(jid)
            q = None if p is None else self.state.queues.by_name.get(p.queue)
            if p is None or q is None or q.free or not self.mode.ranks_queues:
                continue
            rk = self._round_key(q, pi)
            if keeps(self._keep, p, rk.key[0] == GUARANTEED, pi.t - p.eligible, self._keep_floor) and self._within_caps_and_limits(p):
                out.append((rk.order, p, rk.key))
        out.sort(key=lambda x: x[0])
        return out

    def kept_holds(self) -> tuple[KeptHold, ...]:
        """What a reconciler would persist for the next tick's ``Snapshot.kept_holds``."""
        return tuple(KeptHold(j, a) for j, a in sorted(self.kept.items()))

    def _holder_in(self, q: Queue, guaranteed: bool, t: float) -> Pend | None:
        """The job of ``q`` that holds the reservation if ``q`` is the first queue with one: of
        its jobs that may hold it (``may_hold``: its gangs, and in a tier-0 queue its starving
        allocated jobs) and are within their caps and limits, the one that waited longest
        (eligible first, then id).  By age, not by the score: a reservation is how a job that
        waits does not starve, and it is read off the queue's sorted eligible times
        (``Shapes``) without scoring anything.  The visit offers it first (``_visit``).

        The fast walk brackets the caps as ``_rest_that_may_take`` does (a queue of one account,
        the overdraft off: each of its jobs is beyond its caps and limits from some GPU count
        up), so a gang at least as large as one found beyond is passed over unasked, and the
        walk over the gangs stops once even the smallest gang (``Shapes.least_gang_gpus``) is:
        at 8,192 GPUs a capped team's gangs were walked every round (stop 44's perf, 1.8%)."""
        sh = q.shapes
        bracket = self.walk.reuses and self._caps_bracket(q)
        beyond = 1 << 30  # the fewest GPUs known beyond the caps and limits (none yet)
        if guaranteed and sh.any_starving(t):
            for _, jid in sh.alloc_eligible:
                p = self.state.pending[jid]
                if not may_hold(p, guaranteed, t - p.eligible):
                    break  # sorted by eligible: the rest are not starving either
                if p.gpus >= beyond:
                    continue
                if self._within_caps_and_limits(p):
                    return p
                if bracket:
                    beyond = p.gpus
        least = sh.least_gang_gpus() if bracket else 0
        for _, jid in sh.gang_eligible:
            if least >= beyond:
                break  # every gang is beyond
            p = self.state.pending[jid]
            if p.gpus >= beyond:
                continue
            if self._within_caps_and_limits(p):
                return p
            if bracket:
                beyond = p.gpus
        return None

    def _caps_bracket(self, q: Queue) -> bool:
        """May the fast walk bracket ``q``'s caps and limits by GPU count?  In a queue of one
        account with the debug overdraft off, what they read of a job is its GPUs alone, and they
        say no from some GPU count up (``_rest_that_may_take``, ``_holder_in``)."""
        return q.aid >= 0 and self.state.overdraft.gpus <= 0

    def _within_caps_and_limits(self, p: Pend) -> bool:
        """Is the allocated job ``p`` within its team's caps and the mode's limits (a hold could
        serve it; it may search for victims)?"""
        return self.state.within_caps(p) and not (self.mode.limits and self.mode.beyond_limit(
            p, self.state.acct.alloc_gpus.get(p.account, 0), self.ctx.entitlement_gpus.get(p.account, 0.0)))

    def _with_holder(self, q: Queue, cands: list[Pend], h: Hold) -> list[Pend]:
        """The visit's candidates with ``q``'s reservation holder first (``h``, not yet tried):
        the cluster drains nodes for it, so it is offered as soon as its queue is visited."""
        p = self.state.pending.get(h.holder)
        if p is None or p.queue != q.name or (cands and cands[0] is p):
            return cands
        return [p, *(c for c in cands if c is not p)]

    def _candidates(self, q: Queue, pi: PassInputs, tried: set[str]) -> list[Pend]:
        """The ``queue_depth`` candidates a visit offers, in the order it offers them: the best
        by the whole within-team score over the whole queue when the mode scores (so a boost or
        a deadline moves a job from anywhere in it), else the queue's first in its own order."""
        if not self.mode.scores:
            return [self.state.pending[j] for j in self.state.queues.head(q.name, self.mode.depth, tried)]
        o = self.memo.orders
        if o is not None:  # the queue's order, kept while nothing it reads changed (core.candidates)
            mf = self.state.pool.max_free()
            users, queued = self.state.acct.user_version[q.aid] if q.aid >= 0 else 0, q.version
            need = o.state(q.name, pi.t, pi.load, self.state.dependants, mf, users, queued)
            if need == REFIT:
                o.refit(q.name, self._scorer(pi), pi.load, mf)
            elif need == REBUILD:
                o.rebuild(q.name, list(q.jobs), self._scorer(pi), pi.t, pi.load, self.state.dependants, mf, users, queued)
            return o.first(q.name, tried, self.mode.depth)
        every = [self.state.pending[j] for j in self.state.queues.head(q.name, len(q.keys), tried)]
        if len(every) < 2:
            return every
        return self._scorer(pi).best(every, self.mode.depth)

    def _scorer(self, pi: PassInputs) -> Scorer:
        """The pass's scorer at the best node's free GPUs now; the fast walk keeps the last one
        while the pass (``pi``, the object), ``max_free`` and the dependants map are the same,
        which is everything it is made from (the users' GPUs it reads live, as any scorer)."""
        mf, deps = self.state.pool.max_free(), self.state.dependants
        s = self.memo.scorer(pi, mf, deps)
        if s is None:
            s = self._fresh_scorer(pi)
            self.memo.keep_scorer(pi, mf, deps, s)
        return s

    def _fresh_scorer(self, pi: PassInputs) -> Scorer:
        return Scorer(self.ctx, pi.t, pi.load, self.state.pool.max_free(), self.state.acct.user_gpus, pi.boosts, self.state.dependants,
                      memo=self.memo.keeps, merged=self.walk.merges, boost_index=self.memo.boost_index(pi.boosts),
                      facts=self._facts if self.walk.merges else None, weights=self._weights)

    def _visit(self, q: Queue, cands: list[Pend], qk: QueueKey, pi: PassInputs, tried: set[str],
               starts: list[Start], preemptions: list[Preemption]) -> bool:
        """Offer a queue's candidates (``cands``, in the order ``_candidates`` offers them), then
        its other allocated jobs unallocated work (``_free_work_for_the_rest``); True if one
        started."""
        state, starting = self.state, self.starting
        now = pi.now
        first_blocked = True
        capped = False  # a candidate the max_gpus caps held (core.debug_overdraft, beyond_depth)
        for p in cands:
            tried.add(p.jid)
            if p.n == 0:
                continue
            hs = starting.holds
            allow: NodeFilter | None = None if hs is None else allow_for(hs, p, now, qk)  # evicting allocated work: only if it ends in time
            soft: NodeFilter | None = None if allow is None else allow_for(hs, p, now, qk, starting.may_yield(p))  # free GPUs, unallocated work
            free_at, yields_only = soft, allow is not None and soft is None
            if state.sessions.nodes and not p.session:  # other work keeps off the pool
                allow, soft = state.sessions.off(allow), state.sessions.off(soft)  # but may borrow (find_free)
            if p.mr > 0 and not state.within_caps(p):
                if starting.cap_preempt(p, qk, pi, allow, starts, preemptions):
                    return True
                capped = True
                continue
            pl = starting.find_free(p, free_at) if p.per <= state.pool.max_free() else None
            if pl is not None:
                starts.append(starting.launch(p, pl, pi, "fits free GPUs", qk))
                if hs is not None and p.jid in hs.by_holder:
                    starting.holds = hs.without(p.jid)
                return True
            if p.mr <= 0:
                if starting.consolidate_for(p, qk, pi, soft, starts, preemptions):
                    return True  # free work moved off a node for free work (core.consolidation)
                if starting.pack_free_for(p, qk, pi, soft, starts, preemptions):
                    return True  # smaller free work yields its node to free work (core.free_packing)
                continue
            if (self.mode.limits and self.mode.beyond_limit(
                p, state.acct.alloc_gpus.get(p.account, 0), self.ctx.entitlement_gpus.get(p.account, 0.0)
            )):
                continue
            if state.sessions.nodes and starting.take_lent(p, qk, pi, allow, starts, preemptions):
                return True  # a session takes lent pool GPUs back (core.session_pool)
            holder = hs is not None and p.jid in hs.by_holder
            if not first_blocked and not holder:  # any allocated job may still take unallocated work
                if starting.preempt_for(p, qk, pi, soft, starts, preemptions, only_unallocated=True):
                    return True
                continue
            first_blocked = False
            # the holder may evict the jobs that yield to its reservation (victim rule ``reservation``);
            # with the knob hold_evicts, only a tier-0 holder (its team runs below what it is owed)
            evicts = holder and (starting.hold_evicts == "off" or qk[0] == GUARANTEED)
            if starting.preempt_for(p, qk, pi, allow, starts, preemptions, reserve=evicts):
                return True
            if yields_only and starting.preempt_for(p, qk, pi, soft, starts, preemptions, only_unallocated=True):
                return True  # a debug job that yields may replace unallocated work on a reserved node
            if starting.consolidate_for(p, qk, pi, allow, starts, preemptions):
                return True  # movable work moved off the nodes it needs (core.consolidation)
            if holder and self._hold_for(p, qk, pi, allow, starts):
                return True
        if capped and state.overdraft.gpus and self._overdraft_beyond_depth(q, qk, pi, tried, starts):
            return True
        return self._free_work_for_the_rest(q, qk, pi, tried, starts, preemptions)

    def _overdraft_beyond_depth(self, q: Queue, qk: QueueKey, pi: PassInputs, tried: set[str],
                                starts: list[Start]) -> bool:
        """After a visit the caps held: the queue's short debug jobs the overdraft admits that
        were not offered, best first, on free GPUs (``DebugOverdraft.beyond_depth``; they may
        still take unallocated work in ``_free_work_for_the_rest``, so they are not marked tried)."""
        for p in self.state.overdraft.beyond_depth(self.state.acct, self._whole_order(q, pi), tried, self.state.pool.max_gpus,
                                             self.mode.depth):
            soft = self._soft_filter(p, qk, pi.now)
            pl = self.starting.find_free(p, soft) if p.per <= self.state.pool.max_free() else None
            if pl is not None:
                starts.append(self.starting.launch(p, pl, pi, "fits free GPUs", qk))
                return True
        return False

    def _free_work_for_the_rest(self, q: Queue, qk: QueueKey, pi: PassInputs, tried: set[str],
                                starts: list[Start], preemptions: list[Preemption]) -> bool:
        """Free work yields to *any* allocated job, whatever its place in its queue: after the
        visit's candidates, each other allocated job of the queue, best first, may take the
        place of unallocated work (the search for unallocated work only).  Without it an
        allocated job beyond its queue's ``queue_depth`` candidates never searched, and waited
        (31,800 s in a 30-day run) while free work held the GPUs it needed.  Only these jobs:
        they are not offered, so they are not marked tried."""
        if not (self.mode.can_preempt and self.state.acct.unalloc_gpus) or q.free:
            return False
        if not self.walk.rest_may_take(q.shapes, self.state.pool, self.state.acct):
            return False  # none could: the fast walk does not list the whole queue to find that out
        now = pi.now
        found: dict[str, list[Victim]] = {}  # the victims the fast list's searches found, by job
        rest = self._rest_that_may_take(q, qk, pi, tried, found) if self.walk.reuses else self._whole_order(q, pi)
        for p in rest:
            if p.jid in tried or p.n == 0 or p.mr <= 0 or not self._within_caps_and_limits(p):
                continue
            soft = self._soft_filter(p, qk, now)
            if self.starting.preempt_for(p, qk, pi, soft, starts, preemptions, only_unallocated=True, found=found.get(p.jid)):
                return True
        return False

    def _rest_that_may_take(self, q: Queue, qk: QueueKey, pi: PassInputs, tried: set[str],
                            found: dict[str, list[Victim]]) -> list[Pend]:
        """The fast walk's ``_free_work_for_the_rest`` list: of the jobs the loop there would
        search for, only those whose search can succeed now, in the whole order's order -- without
        scoring or merging the rest of a long queue (whose every job the plain list ranks: issue
        27, the cost per job grew with the cluster).  Exact, as the loop changes nothing before
        its first success (a search that fails, or a start that must wait for a session's grace,
        which no search for unallocated work reads):

        * more GPUs than are free plus every unallocated GPU: ``victims_for``'s first bound
          fails the search;
        * a search for unallocated work reads nothing of the job but its shape and the nodes its
          filter keeps it off (``held_nodes``; the failed-search memo keys it so too,
          ``FailedSearches.find_shape``), so one search per (shape, held nodes), on the first
          job of each, decides for all of them;
        * a subset of a total order keeps its order: the jobs left are ranked by the pass's
          scorer (``Scorer.rank``, the whole order's key) or, in a mode that does not score, kept
          in the queue's order (``q.jobs``, which ``QueueSet.head`` reads).

        The caller checks every job again as before.  A job's caps are read before its key is
        searched: a key whose only jobs are over their caps is then never searched, and a search
        that finds victims is not remembered, so it would run at every visit (tried at stop 44:
        2.6x the CPU at 4,096 GPUs).  With the overdraft off, what the caps and limits read of a
        job is its account and GPUs (``Accounting.fits_caps_of``, ``Mode.beyond_limit``), and
        both say no from some GPU count up (``running + gpus > limit``); nothing changes during
        the call; so in a queue of one account the answer is bracketed by the most GPUs found
        within and the fewest found beyond (``within``, ``beyond``), and asked only between them
        (a dict of the answers by GPU count cost more than the asking: 674 M instructions
        against 476 M at 8,192 GPUs).
        The victims each search found go into ``found`` under the searched job's id: if the
        caller's loop reaches that very job, nothing has changed since (the loop changes nothing
        before its first success), so its search would find them again; it starts with them
        (``Starting.preempt_for``) instead of searching twice.  Only that job: a victim's
        reason names the job it makes room for."""
        room = self.state.pool.free_gpus() + self.state.acct.unalloc_gpus
        # failed or not, by held nodes then shape: a filter's node set is most often the very same
        # object (``SessionPool.off`` keeps them), its hash kept, where a (shape, nodes) key was a
        # tuple made and hashed per job
        fails: dict[frozenset[int] | None, dict[int, bool]] = {}
        bracket = self._caps_bracket(q)
        within, beyond = -1, room + 1  # GPU counts known within the caps and limits, and beyond
        out: list[Pend] = []
        now = pi.now
        for p in q.jobs:
            g = p.gpus
            if p.n == 0 or p.mr <= 0 or g > room or g >= beyond or p.jid in tried:  # (a hash last)
                continue
            if g > within:
                if not self._within_caps_and_limits(p):
                    if bracket:
                        beyond = g
                    continue
                if bracket:
                    within = g
            soft = self._soft_filter(p, qk, now)
            held = held_nodes(soft)
            by_shape = fails.get(held)
            if by_shape is None:
                by_shape = fails[held] = {}
            failed = by_shape.get(p.shape)
            if failed is None:
                victims = self.starting.victims_for(p, qk, pi, soft, True, False)
                failed = by_shape[p.shape] = victims is None
                if victims is not None:
                    found[p.jid] = victims
            if not failed:
                out.append(p)
        if len(out) < 2 or not self.mode.scores:
            return out
        return self._scorer(pi).rank(out)

    def _soft_filter(self, p: Pend, qk: QueueKey, now: float) -> NodeFilter | None:
        """The nodes ``p`` may use outside its visit's candidates: off the holds that bind its
        queue unless it may yield to them (``allow_for``), and off the session pool unless it is
        a session (``core.session_pool``)."""
        hs = self.starting.holds
        soft = None if hs is None else allow_for(hs, p, now, qk, self.starting.may_yield(p))
        if self.state.sessions.nodes and not p.session:
            soft = self.state.sessions.off(soft)
        return soft

    def _whole_order(self, q: Queue, pi: PassInputs) -> list[Pend]:
        """Every job of ``q`` in the order its visits offer them (``_candidates``, whole)."""
        if not self.mode.scores:
            return [self.state.pending[j] for j in self.state.queues.head(q.name, len(q.keys), set())]
        kept = self.memo.orders
        if kept is not None:  # the kept order, made fresh by this very visit's ``_candidates``
            return kept.jobs(q.name)
        return self._scorer(pi).rank([self.state.pending[j] for j in self.state.queues.head(q.name, len(q.keys), set())])

    def _hold_for(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start]) -> bool:
        """Re-plan the reservation of its blocked holder ``p``, off the other holds' nodes; True
        if it can in fact start now (where ``allow``, the other holds' filter, admits)."""
        hs = self.starting.holds
        if hs is None:  # pragma: no cover - only a holder re-plans
            return False
        new = self._plan_hold(p, qk, pi.now, self._off_pool(p, hs.others(p.jid)))
        if new is None:
            return False
        if new.at <= pi.now:  # only the old reservation stood in the way
            pl = self.state.pool.find(p.spec, p.n, p.per, allow)
            if pl is not None:
                self.starting.holds = hs.without(p.jid)
                starts.append(self.starting.launch(p, pl, pi, "fits free GPUs", qk))
                return True
        self.starting.holds = hs.replaced(new)
        return False

    def _off_pool(self, p: Pend, taken: frozenset[int]) -> frozenset[int]:
        """``taken`` and, unless ``p`` is a session, the session pool's nodes: a reservation of
        other work never drains the pool (``core.session_pool``, rule 3)."""
        if not self.state.sessions.nodes or p.session:
            return taken
        return taken | self.state.sessions.nodes if taken else self.state.sessions.nodes

    def _plan_hold(self, p: Pend, qk: QueueKey, now: float, taken: frozenset[int] = frozenset()) -> Hold | None:
        """``plan_hold`` off the nodes ``taken`` by better-ranked holds, reused by the fast walk
        while the state version is the same (the nodes and their free times only depend on the
        state; the time is clamped to ``now``)."""
        if self._kept_slack is not None:  # a kept hold: its yielding debug jobs may run past its start
            h = self._plan_hold_at(p, qk, now, taken)
            if h is None or not keepable(self._keep, p, self._keep_floor):  # not kept: no anchor, no tolerance
                return h
            return Hold(h.holder, h.nodes, h.at, qk, self.kept.get(p.jid, h.at) + self._kept_slack)
        return self._plan_hold_at(p, qk, now, taken)

    def _plan_hold_at(self, p: Pend, qk: QueueKey, now: float, taken: frozenset[int]) -> Hold | None:
        """``plan_hold``, the plain hold (``yield_by`` its start)."""
        return self.memo.plan_hold(self.state.pool, self.state.ends, p, now, qk, taken, self.state.version)

    # -- reporting ---------------------------------------------------------------------------
    def order(self, now: float, usage: Mapping[str, float]) -> tuple[Ranked, ...]:
        """The full pending order with its metrics (what explain shows; read-only)."""
        from allotment.core.order import pending_order

        return pending_order(self, self.inputs(now, usage))


def _key_of(order: int, names: int, ranks: int, by_rank: list[Queue]) -> QueueKey:
    """The (tier, rank, name) key whose ``Scheduler._order`` is ``order``, for ``names`` queue
    names dealt as ``by_rank`` and ``ranks`` ranks."""
    tr, k = divmod(order, names)
    return (tr // ranks, tr % ranks, by_rank[k].name)
