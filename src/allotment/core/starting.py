"""How a job the pass chose starts: on GPUs it found (``launch``) or through preemption
(``preempt_for``, ``cap_preempt``), and how an eviction of work started earlier in the same pass
is undone (``_evict_all``).  The scheduler (``core.scheduler``) decides *which* job to offer; this
part only carries a start out, under the rules that bind every start: the reservation's node
filter (``core.reservation.allow_for``, passed in as ``allow``) and the slicing rule
(``core.preemption.slicing``).  What the fast walk keeps of its searches (the victim view, failed
victim and cap searches) is ``memo``'s (``core.fast_walk``), asked before a search and told after it.

A collaborator, not a layer of the scheduler: ``Starting`` is given the cluster's state
(``core.cluster.ClusterState``, whose mutations -- ``start``, ``evict``, ``take_pending`` -- keep
every index in step) and the fast walk's memo, and holds what only a start reads (the policy
fields read per candidate, the round's reservations, this pass's starts and notices).  The
scheduler holds one and asks it; neither inherits the other, so what a rule reads is named at
its use (``self.state.running``), not found somewhere up a class tower.
"""

from __future__ import annotations

from allotment.core.cluster import ClusterState
from allotment.core.consolidation import RULE as CONSOLIDATE
from allotment.core.consolidation import place_beside_fixed, plan_consolidation
from allotment.core.debug import is_debug, is_short_debug
from allotment.core.decisions import Preemption, Start
from allotment.core.fast_walk import Memos
from allotment.core.free_packing import RULE as FREE_PACKING
from allotment.core.free_packing import WHY as FREE_PACKING_WHY
from allotment.core.free_packing import plan_free_packing
from allotment.core.modes import FREE_SUFFIX, GLOBAL_QUEUE
from allotment.core.pass_inputs import PassInputs, QueueKey
from allotment.core.placement import NodeFilter
from allotment.core.preemption import gang_sparing
from allotment.core.preemption.caps import find_cap_victims
from allotment.core.preemption.slicing import OWN_TEAM, ends_within, frees_room_for, may_slice
from allotment.core.preemption.victims import (
    find_victims,
)
from allotment.core.preemption.view import FOR_NOW, NoVictims, Victim, VictimView
from allotment.core.reservation import Holds, evicts_for_hold, held_nodes, yields
from allotment.core.session_grace import Notice, may_stop
from allotment.core.session_pool import RULE as SESSION_POOL
from allotment.core.session_pool import OnlyPool
from allotment.core.state import Pend, Run
from allotment.core.tiers import GUARANTEED, tier


class Starting:
    def __init__(self, state: ClusterState, memo: Memos) -> None:
        self.state = state
        # read-only, the state's own (a mode and a policy never change): held here too, so a
        # rule reads them in one load, as before
        self.ctx, self.policy, self.mode = state.ctx, state.policy, state.mode
        # the policy fields read per candidate, once: the policy is an interpreted class (a
        # generic attribute lookup per read; 3.6 M of them in may_yield over a 30-day run)
        self._debug_threshold_s = float(self.policy.debug_threshold_s)
        self._max_gpus = state.pool.max_gpus  # the largest node's GPUs: nodes never change size
        self._keep_nonresumable = self.policy.non_resumable == "run_to_completion"
        # knob hold_evicts: resumable allocated work yields to reservations after its protection
        self.hold_evicts = str(self.policy.hold_evicts) if self.mode.reclaims else "off"
        self._hysteresis = float(self.policy.reclaim_hysteresis)
        self._spare_gangs = gang_sparing.FORMS[str(self.policy.spare_gangs)]  # knob: core.preemption.gang_sparing
        # the round's reservations (the last pass's are reported): the scheduler decides them,
        # every start here keeps off them
        self.holds: Holds | None = None
        self._launched: dict[str, Pend] = {}  # this pass's starts, to undo one (see _evict_all)
        # what the fast walk keeps, and when it forgets it (core.fast_walk; the reference keeps nothing)
        self.memo = memo
        self._queue_names: dict[str, tuple[bool, str]] = {}
        self.notices: list[Notice] = []  # this pass's notices to sessions (core.session_grace)
        self.graces = self.policy.interactive.grace_s > 0
        # Policy.consolidate: only where resumable work is requeued and the mode reclaims
        self.consolidates = bool(self.policy.consolidate) and self.policy.requeue_resumable and self.mode.reclaims

    def begin_pass(self) -> None:
        """A pass starts: no start of it to undo yet, no notice given."""
        self._launched = {}
        self.notices = []

    def queued_entry(self, jid: str) -> Pend:
        """The queue entry the last pass's start of ``jid`` took, as it was queued: a driver
        whose backend had not run that start by its next read puts the job back with it
        (``sim.runner``, the launches as run)."""
        return self._launched[jid]

    def _account_of(self, q: str) -> tuple[bool, str]:
        """(is it an unallocated-work queue, its account) of a queue name."""
        got = self._queue_names.get(q)
        if got is None:
            free = q.endswith(FREE_SUFFIX)
            got = self._queue_names[q] = (free, q[: -len(FREE_SUFFIX)] if free else q)
        return got

    def queue_key(self, q: str, pi: PassInputs) -> QueueKey:
        """(tier, Fair Tree rank, name): the order in which a round visits queues."""
        if q == GLOBAL_QUEUE:
            return (0, 0, q)
        free, account = self._account_of(q)
        tr = tier(free, self.state.acct.alloc_gpus.get(account, 0), pi.owed.get(account, 0.0))
        return (tr, pi.rank_index.get(account, len(pi.rank_index)), q)

    def may_yield(self, p: Pend) -> bool:
        """May ``p`` start on a reserved node as a job that yields to it after its protection?
        Only a debug job on one node (``core.debug``; debug work must start in seconds, and it is
        protected for minutes, not hours) that is short by its work too -- its remaining work
        within the debug threshold, so what a yield throws away is bounded by it (a job
        protected 10 minutes but running 12 hours took reserved nodes and was thrown away at
        the gang's start) -- and only where a reservation may evict it then: in a mode that
        reclaims, and not a job kept to completion (``non_resumable: run_to_completion``)."""
        threshold = self._debug_threshold_s
        return (self.mode.reclaims and p.n == 1
                and is_short_debug(p.mr, p.gpus, p.work - p.done_work, threshold, self._max_gpus)
                and not (self._keep_nonresumable and not p.resumable))

    def debug_end(self, p: Pend, now: float) -> float | None:
        """When ``p`` would end if it started ``now``, if it is a debug job (``core.debug``) that
        may take the place of its own team's work of the same priority
        (``core.preemption.debug_slice``); None for any other job, and in modes that do not slice."""
        if not (self.mode.reclaims and is_debug(p.mr, p.gpus, self._debug_threshold_s, self._max_gpus)):
            return None
        return now + max(0.0, p.work - p.done_work)

    def victim_view(self, pi: PassInputs) -> VictimView:
        """What a victim search reads.  The fast walk keeps one per (state version, inputs),
        with a memo of the answers that depend on nothing else (``VictimView.memo``)."""
        v = self.memo.view(self.state.version)
        if v is None:
            v = VictimView(self.state.pool, self.state.running, self.state.acct, self._keep_nonresumable, self._hysteresis,
                           self.mode.reclaims, pi.t, self.memo.view_memo(),
                           self._debug_threshold_s if self.mode.debug_reclaims else -1.0, self._spare_gangs)
            self.memo.keep_view(self.state.version, v)
        return v

    def _better_waiting_per(self, qk: QueueKey, pi: PassInputs) -> int:
        """The fewest GPUs per node any allocated job waiting in a queue ranked before ``qk``
        needs (0: none waits), for ``may_slice``."""
        best = 0
        for q in self.state.queues.nonempty():
            if self._account_of(q)[0] or self.queue_key(q, pi) >= qk:
                continue
            per = self.state.queues.min_per(q)
            if per > 0 and (best == 0 or per < best):
                best = per
        return best

    def _slice_ok(self, p: Pend, qk: QueueKey, pi: PassInputs, victims: list[Victim]) -> bool:
        """``may_slice`` for ``victims`` found for ``p`` of a queue at ``qk``."""
        if qk[0] == GUARANTEED or not any(v.rule in OWN_TEAM for v in victims):
            return True
        end = pi.now + max(0.0, p.work - p.done_work)
        return may_slice(qk[0], ends_within(end, victims, self.state.running),
                         lambda: frees_room_for(self._better_waiting_per(qk, pi), victims, self.state.running, self.state.pool.free))

    def preempt_for(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start],
                     preemptions: list[Preemption], *, only_unallocated: bool = False, reserve: bool = False,
                     found: list[Victim] | None = None) -> bool:
        """Start ``p`` on the GPUs of victims (every class, or only unallocated work; ``reserve``:
        it may hold a reservation, so jobs that yield to one are victims too); True if it started.
        ``found``: what this very search found on this very state (the fast walk's
        ``Scheduler._rest_that_may_take``), not searched again."""
        if found is None:
            found = self.victims_for(p, qk, pi, allow, only_unallocated, reserve)
        if found is None or (self.graces and self._told_first(found, p, pi.now)):
            return False
        self._evict_all(found, p, pi, starts, preemptions)
        pl = self.state.pool.find(p.spec, p.n, p.per, allow)
        if pl is None:  # cannot happen: victims were chosen to free exactly this
            raise AssertionError(f"preemption for {p.jid} did not free enough GPUs")
        starts.append(self.launch(p, pl, pi, f"preempted {len(found)} job(s)", qk))
        return True

    def victims_for(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, only_unallocated: bool,
                     reserve: bool) -> list[Victim] | None:
        """The victims ``preempt_for`` evicts for ``p`` (None: none), from a search or, in the
        fast walk, from the memo of failed ones (``Memos.still_failed``, ``preemption.retry``)."""
        if not self.mode.can_preempt or not self.state.acct.preemptible:
            return None
        if only_unallocated and not self.state.acct.unalloc_gpus:
            return None
        # every GPU any search could free, plus the free ones, is too few: find_victims's first
        # bound says no on any state like this one, so neither search nor memo is needed
        if self.state.pool.free_gpus() + self.state.acct.unalloc_gpus + (0 if only_unallocated else self.state.acct.alloc_gpus_pre_total) < p.gpus:
            return None
        held = held_nodes(allow)
        # a search for unallocated work only reads the job's shape (core.preemption.victims)
        shape = p.shape if only_unallocated else -1
        view, end = self.victim_view(pi), self.debug_end(p, pi.now)
        if self.memo.still_failed(self.state, view, p, pi, qk, allow, only_unallocated, shape, reserve, held, end):
            return None  # the same search already failed, and nothing since could change that
        keep = self.memo.pick_keeper(shape)
        found = find_victims(view, p, p.n, p.per, pi.owed, pi.measure, allow=allow, only_unallocated=only_unallocated,
                             reserve=reserve, debug_end=end, keep=keep)
        if not isinstance(found, NoVictims) and not self._slice_ok(p, qk, pi, found):  # search again without slicing
            keep = None  # (the answer below read the queues)
            found = find_victims(view, p, p.n, p.per, pi.owed, pi.measure, allow=allow, slice_ok=False, reserve=reserve)
            if isinstance(found, NoVictims):
                found = FOR_NOW  # the slicing rule read the queues: this holds on this very state only
        if isinstance(found, NoVictims):
            self.memo.keep_failure(self.state, view, p, pi, qk, shape, held, reserve, found, keep, end)
            return None
        return found

    def cap_preempt(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start],
                     preemptions: list[Preemption]) -> bool:
        """Over a max_gpus cap: only the team's own lower-priority work can make room.  The fast
        walk reuses a failed cap search (``find_cap_victims`` found none: even taking all of
        that work leaves the cap or the nodes short) while nothing could make it succeed: no
        job stopped and no node's health changed (``released``), none of the team's own jobs
        became preemptible (``own_growth``), same pass inputs; starts only fill the cap and the
        nodes further (one of the team's own that is preemptible at once adds as much to the
        cap as it could give back).  With the debug overdraft's yield (``core.debug_overdraft``)
        a start can also take the team beyond a cap, which makes its debug jobs past their
        protection victims: a failure is reused only while the team is beyond a cap as it was
        then (``beyond``; it stops being so only through a stop, which ``released`` counts)."""
        if not (self.mode.reclaims and self.state.acct.alloc_gpus_pre.get(p.account, 0)):
            return False
        held = held_nodes(allow)
        own = self.state.own_growth.get(p.account, 0)
        od = self.state.overdraft
        beyond = od.yielding(self.state.acct, p.account)
        if self.memo.cap_failed(p, held, self.state.released, own, beyond):
            return False
        found = find_cap_victims(self.victim_view(pi), p, p.n, p.per, allow, self.debug_end(p, pi.now),
                                 od if beyond else None)
        if found is None:
            self.memo.keep_cap_failure(p, held, self.state.released, own, beyond)
            return False
        if not self._slice_ok(p, qk, pi, found):  # read the queues and the time: not kept
            return False
        if self.graces and self._told_first(found, p, pi.now):
            return False
        self._evict_all(found, p, pi, starts, preemptions)
        pl = self.state.pool.find(p.spec, p.n, p.per, allow)
        if pl is None or not self.state.acct.fits_caps(p.account, p.gpus):  # cannot happen
            raise AssertionError(f"cap preemption for {p.jid} did not make room")
        starts.append(self.launch(p, pl, pi, f"preempted {len(found)} job(s) of its own team", qk))
        return True

    def consolidate_for(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start],
                         preemptions: list[Preemption]) -> bool:
        """Start the blocked ``p`` by moving movable work off the nodes it needs
        (``core.consolidation``; for an unallocated ``p``, unallocated work only); True if it started.  Each move is a preemption and a start
        of the same job in this pass, on the node the plan chose."""
        if not self.consolidates or p.n != 1 or not self.state.acct.preemptible:
            return False  # a gang has its reservation: moving work for it churned (docs/design/preemption.md)
        closed = self._closed_to_moves(p)
        if p.mr > 0:
            movable, bound = self._movable, self.state.acct.pre_on_node
        else:  # only unallocated work may move for it: bound each node by that work's GPUs there
            movable, bound = self._movable_free, [0] * len(self.state.pool.free)
            for i, g in self.state.acct.owner_nodes.get("", {}).items():
                bound[i] = g
        plan = plan_consolidation(self.state.pool, self.state.running, movable, p.gpu_type, p.per, allow, closed, pi.now, bound)
        if plan is None:
            return False
        names = self.state.pool.names
        freed = names[plan.target]
        for m in plan.moves:
            src = names[self.state.running[m.job_id].placement[0][0]]
            preemptions.append(self.state.evict(m.job_id, pi.now, p.jid, CONSOLIDATE,
                                           f"moved from {src} to {names[m.node]} to free {freed} for {p.jid}"))
            q = self.state.pending[m.job_id]
            starts.append(self.launch(q, ((m.node, m.gpus),), pi, f"moved from {src} to free {freed} for {p.jid}",
                                       self.queue_key(q.queue, pi)))
        if self.state.pool.free[plan.target] < p.per:  # cannot happen: the plan freed this much there
            raise AssertionError(f"consolidation for {p.jid} did not free {freed}")
        starts.append(self.launch(p, ((plan.target, p.gpus),), pi, f"moved {len(plan.moves)} job(s) to free {freed}", qk))
        return True

    def _closed_to_moves(self, p: Pend) -> frozenset[int]:
        """The nodes a move or a swap for ``p`` never uses: the reserved ones, and unless ``p``
        is a session the session pool's (moved work stays off it, ``core.session_pool``)."""
        closed = frozenset() if self.holds is None else self.holds.nodes
        if self.state.sessions.nodes and not p.session:
            closed = closed | self.state.sessions.nodes
        return closed

    def pack_free_for(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start],
                       preemptions: list[Preemption]) -> bool:
        """Start the blocked unallocated single-node ``p`` on a node whose free GPUs and smaller
        unallocated work make room for it, evicting that work (``core.free_packing``); True if
        it started.  Only where consolidation is on, and after it found no way that moves instead."""
        if not self.consolidates or p.n != 1 or p.mr > 0 or not self.state.acct.preemptible:
            return False
        closed = self._closed_to_moves(p)
        plan = plan_free_packing(self.state.pool, self.state.running, self._movable_free, p.gpu_type, p.per, allow, closed, pi.now)
        if plan is None:
            return False
        why = FREE_PACKING_WHY.format(job=p.jid)
        self._evict_all([Victim(j, FREE_PACKING, why) for j in plan.victims], p, pi, starts, preemptions)
        pl = self.state.pool.find(p.spec, 1, p.per, OnlyPool(frozenset((plan.target,)), None))
        if pl is None:  # cannot happen: the victims and the free GPUs there make room
            raise AssertionError(f"free packing for {p.jid} did not free {self.state.pool.names[plan.target]}")
        starts.append(self.launch(p, pl, pi, f"took {self.state.pool.names[plan.target]} from {len(plan.victims)} smaller unallocated job(s)", qk))
        return True

    def find_free(self, p: Pend, allow: NodeFilter | None) -> tuple[tuple[int, int], ...] | None:
        """Where ``p`` starts on free GPUs (``_best_free``); with a session pool, a session
        there first, other work off it first and on it only if it may borrow (``core.session_pool``)."""
        sp = self.state.sessions
        if not sp.nodes:
            return self._best_free(p, allow)
        if p.session:
            return self._best_free(p, OnlyPool(sp.nodes, allow)) or self._best_free(p, allow)
        got = self._best_free(p, sp.off(allow))
        if got is None and sp.may_borrow(p.spec, p.n, p.per, self.state.pool):
            got = self._best_free(p, allow)
        return got

    def take_lent(self, p: Pend, qk: QueueKey, pi: PassInputs, allow: NodeFilter | None, starts: list[Start],
                  preemptions: list[Preemption]) -> bool:
        """A blocked allocated session takes lent pool GPUs back at once (``core.session_pool``,
        rule 4); True if it started."""
        sp = self.state.sessions
        if p.n != 1 or not self.mode.can_preempt or not p.session:
            return False
        got = sp.reclaim(self.state.pool, self.state.running, p.spec, p.per, allow)
        if got is None:
            return False
        node = self.state.pool.names[got.node]
        self._evict_all([Victim(j, SESSION_POOL, f"lent pool GPUs on {node}, taken back for session {p.jid}")
                         for j in got.jobs], p, pi, starts, preemptions)
        pl = self.state.pool.find(p.spec, 1, p.per, OnlyPool(frozenset((got.node,)), None))
        if pl is None:  # cannot happen: the lent jobs held exactly this
            raise AssertionError(f"taking lent GPUs back for {p.jid} did not free {node}")
        starts.append(self.launch(p, pl, pi, f"took back {len(got.jobs)} lent job(s) on pool node {node}", qk))
        return True

    def _best_free(self, p: Pend, allow: NodeFilter | None) -> tuple[tuple[int, int], ...] | None:
        """Best fit (``NodePool.find``); with consolidation on, a single-node job that can never
        move goes beside such work (``place_beside_fixed``)."""
        if self.consolidates and p.n == 1 and not p.resumable:
            return place_beside_fixed(self.state.pool, p.spec, p.per, allow, self.state.fixed_gpus)
        return self.state.pool.find(p.spec, p.n, p.per, allow)

    def _movable(self, r: Run) -> bool:
        """May consolidation move ``r`` (``core.consolidation``)?  Resumable work past its
        protection (or unallocated), not started in this pass, not a session (it is told
        before it is stopped, and a move is not worth a notice)."""
        return (r.resumable and r.jid in self.state.acct.preemptible and r.jid not in self._launched
                and r.jid not in self.state.noticed and self.state.grace_of(r.spec) <= 0)

    def _movable_free(self, r: Run) -> bool:
        """What consolidation may move for a blocked *unallocated* job: unallocated work only
        (``_movable``'s terms).  Free work may be reshuffled to make room for free work; a funded
        team's progress is never thrown away for work nobody pays for."""
        return not r.allocated and self._movable(r)

    def _told_first(self, victims: list[Victim], p: Pend, now: float) -> bool:
        """Must ``p`` wait for a session among ``victims`` to have its notice and its grace
        (``core.session_grace``)?  Each session without a notice for its run is told now.  A
        victim started earlier in this pass is taken back, not stopped: it is owed nothing."""
        wait = False
        for v in victims:
            if v.job_id not in self._launched and self.must_wait_for_grace(v.job_id, p.jid, v.rule, v.reason, now):
                wait = True
        return wait

    def must_wait_for_grace(self, jid: str, for_job: str | None, rule: str, reason: str, now: float) -> bool:
        """Must the running ``jid`` be told, or does its grace still run, before it may be stopped
        ``now`` (``core.session_grace``)?  A session without a notice for this run is told now."""
        grace = self.state.grace_of(self.state.running[jid].spec)
        at = self.state.noticed.get(jid)
        if may_stop(at, grace, now):
            return False
        if at is None:
            self.state.noticed[jid] = now
            self.notices.append(Notice(jid, for_job, rule, now, grace, reason))
        return True

    def _evict_all(self, victims: list[Victim], p: Pend, pi: PassInputs, starts: list[Start], out: list[Preemption]) -> None:
        """Evict ``victims``.  A victim started earlier in this same pass (unallocated work, which
        is preemptible at once) is not evicted but un-started: it goes back to the queue exactly
        as it was, and its start is taken out of this pass's decisions, so the decisions stay the
        net change a driver applies."""
        for v in victims:
            undo = self._launched.pop(v.job_id, None)
            if undo is None:
                out.append(self.state.evict(v.job_id, pi.now, p.jid, v.rule, v.reason))
                continue
            self.state.stop(v.job_id)
            self.state.requeue_unstarted(undo)
            starts[:] = [s for s in starts if s.job_id != v.job_id]

    def launch(self, p: Pend, pl: tuple[tuple[int, int], ...], pi: PassInputs, why: str, qk: QueueKey) -> Start:
        self.state.take_pending(p.jid)
        alloc = self.state.acct.alloc_gpus.get(p.account, 0)
        terms = self.mode.launch(p, pi.now, alloc, self.ctx.entitlement_gpus.get(p.account, 0.0),
                                 why + self.mode.queue_note(qk[0], qk[1]))
        lent = self.state.on_lent_gpus(p.spec, pl)
        until = min(terms.protected_until, pi.now) if lent else terms.protected_until  # core.session_pool
        r = Run(p.spec, pi.now, pl, terms.allocated, until, p.done_work, p.declared, p.evicted_by)
        r.lent = lent
        r.eligible = p.eligible
        r.yields = terms.allocated and (yields(self.holds, p, pi.now, pl, self.may_yield(p), qk) or (
            self.hold_evicts != "off" and evicts_for_hold(self.hold_evicts, p, p.session, alloc + p.gpus > self.state.owed(p.account))))
        self.state.start(r, pi.now)
        self._launched[p.jid] = p
        why = terms.reason + ("; yields to the reservation after its minimum runtime" if r.yields else "")
        if r.allocated:
            why += self.state.overdraft.note(self.state.acct, p.account)  # beyond the cap (core.debug_overdraft)
        if lent:
            why += "; on lent session-pool GPUs: a waiting session takes them back at once"
        return Start(p.jid, tuple((self.state.pool.names[i], g) for i, g in pl), terms.allocated, why, r.yields)
