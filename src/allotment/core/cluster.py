"""The scheduler's state and its only mutations: jobs queued, started, stopped, evicted; node
health.  Every index (pool, queues, accounting, node ends, protections) is updated here and
nowhere else, so they cannot drift apart.  The scheduler holds one (``Scheduler.state``) and
gives it to its ``Starting``; neither inherits it.  The simulator keeps one scheduler, so one
``ClusterState``, for a whole run; ``decide`` builds one from a snapshot; both then run the same
pass (``core.scheduler``).  Drivers change it from outside (arrivals, completions, health); a
pass changes it only through ``start``, ``stop``, ``evict``, ``take_pending`` and their kin below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from allotment.core.accounting import Accounting
from allotment.core.context import Context
from allotment.core.contract import min_runtime
from allotment.core.debug_overdraft import DebugOverdraft
from allotment.core.decisions import Preemption
from allotment.core.dependant_list import DependantList
from allotment.core.jobs import JobSpec, kept_work
from allotment.core.modes import mode_for
from allotment.core.pair_heap import heappop, heappush
from allotment.core.placement import NodePool
from allotment.core.preemption.retry import NodeLog
from allotment.core.queues import QueueSet
from allotment.core.reservation import NodeEnds
from allotment.core.session_grace import grace_of, restored
from allotment.core.session_pool import SessionPool
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend, Run


class ClusterState:
    def __init__(self, ctx: Context, nodes: tuple[NodeState, ...]) -> None:
        self.ctx = ctx
        self.policy = ctx.policy
        # what ``owed`` reads (per leaf, per candidate and per pass), copied out of the context once:
        # ``Context`` is interpreted, so each read of it was a generic attribute lookup, and its
        # mapping's ``get`` a generic call (the context never changes, so the copies stay equal)
        self._capacity = ctx.capacity_gpus
        self._entitled: dict[str, float] = dict(ctx.entitlement_gpus)
        self.mode = mode_for(ctx.mode, ctx.policy.queue_depth, bool(ctx.policy.debug_reclaim))
        self.pool = NodePool(nodes)
        self.running: dict[str, Run] = {}
        self.pending: dict[str, Pend] = {}
        self.queues = QueueSet()
        self.acct = Accounting(ctx, len(self.pool.names))
        # a capped team's short debug jobs may pass its max_gpus by this much (core.debug_overdraft)
        self.overdraft = DebugOverdraft(ctx.policy.debug_over_cap, float(ctx.policy.debug_threshold_s), ctx.policy,
                                        self.mode.reclaims)
        self.ends = NodeEnds(len(self.pool.names))
        self.protect: list[tuple[float, str]] = []  # (protected_until, job) of protected jobs
        self.unhealthy_since: dict[int, float] = {}
        self.pending_gpus = 0
        self.running_gpus = 0
        # bumped by every change of what a victim search or a reservation reads (pool, running
        # jobs, accounting, health): lets the fast walk reuse an answer computed on the same state
        self.version = 0
        # bumped by every change of the pending queues (a victim search's slicing rule reads them)
        self.queued_version = 0
        # per job, the jobs of its team waiting for it (core.priority.dependants; set by the driver)
        self.dependants: Mapping[str, DependantList] = {}
        # where something grew that can let a victim search find what it could not
        # (preemption.view.NoVictims, read by preemption.retry): the nodes of a job that stops
        # (unless it was unallocated work a search could take: its GPUs turn free, the sum
        # stays) or becomes preemptible, a node whose health changes; ``own_growth``, per account,
        # counts its allocated jobs becoming preemptible (a cap search takes only its own team's);
        # ``donor_growth`` for searches that looked at other accounts -- an account with
        # preemptible allocated work comes to run over what it is owed (it may turn donor).
        # Nothing else of a start counts: it turns free GPUs into GPUs of the new job, which no
        # search can take more of than it could take of them free.
        self.grown = NodeLog()
        # every node a start, a stop or a health change touched (preemption.kept_pick)
        self.touched = NodeLog()
        self.own_growth: dict[str, int] = {}
        self.donor_growth = 0
        # each job shape (GPUs, n, per, GPU type) seen, by id (``Pend.shape``): what a failed
        # search for unallocated work only is remembered by (``preemption.retry``)
        self._shape_ids: dict[tuple[int, int, int, str | None], int] = {}
        # bumped by every stop and health change: what frees GPUs for a cap search, which takes
        # only its own team's work and so also gains from unallocated work ending (core.starting)
        self.released = 0
        self._keep_nonresumable = ctx.policy.non_resumable == "run_to_completion"
        # sessions told they will be stopped (core.session_grace): job -> when, for its current
        # run only (a stop of any kind forgets it)
        self.noticed: dict[str, float] = {}
        # per node, the GPUs of running work that is not resumable: what consolidation can never
        # move, and where it packs more such work (core.consolidation, ``place_beside_fixed``)
        self.fixed_gpus: list[int] = [0] * len(self.pool.names)
        # nodes reserved for sessions, lent to preemptible work while idle (core.session_pool)
        self.sessions = SessionPool(ctx.policy.interactive, self.pool.names, self._keep_nonresumable)

    # -- questions ---------------------------------------------------------------------------
    def min_runtime(self, spec: JobSpec) -> float:
        return min_runtime(spec.min_runtime, self.policy)

    def queue_of(self, spec: JobSpec) -> str:
        return self.mode.queue_of(spec.account, self.min_runtime(spec))

    def ceiling(self, account: str) -> int | None:
        return self.acct.ceiling(account)

    def within_caps(self, p: Pend) -> bool:
        """May the allocated ``p`` start as far as the ``max_gpus`` caps on its path go: room
        under each, or a short debug job within the overdraft beyond them
        (``core.debug_overdraft``)?"""
        # the knob's off-test read first: no call at all with the knob off (150,271 calls in a
        # 3-day ``ai2`` run; ``DebugOverdraft`` is compiled since stop 46, interpreted before)
        od = self.overdraft
        return self.acct.fits_caps_of(p.aid, p.gpus) or (od.gpus > 0 and od.admits(self.acct, p, self.pool.max_gpus))

    def could_ever_fit(self, spec: JobSpec) -> bool:
        """False when the job is larger than a max_gpus cap on its account's path."""
        c = self.acct.ceiling(spec.account)
        return c is None or spec.gpus <= c

    def grace_of(self, spec: JobSpec) -> float:
        """The grace a job gets before it is stopped (``core.session_grace``)."""
        return grace_of(spec, self.policy.interactive)

    def grace_end(self, now: float) -> float:
        """The soonest end of a grace after ``now`` among the running sessions told (inf: none):
        a pass then may stop what it could not stop before."""
        best = math.inf
        for jid, at in self.noticed.items():
            r = self.running.get(jid)
            if r is not None:
                end = at + self.grace_of(r.spec)
                if now < end < best:
                    best = end
        return best

    def owed(self, leaf: str) -> float:
        """GPUs owed to ``leaf`` now: its entitlement scaled to the healthy capacity."""
        cap = self._capacity
        return self._entitled.get(leaf, 0.0) * (self.pool.healthy_total / cap if cap else 0.0)

    # -- changes from outside (arrivals, completions, health) --------------------------------
    def add_pending(
        self,
        spec: JobSpec,
        eligible: float,
        queued_since: float,
        *,
        done_work: float = 0.0,
        declared: int | None = None,
        evicted_by: str | None = None,
    ) -> None:
        mr = self.min_runtime(spec)
        p = Pend(spec, eligible, queued_since, done_work, spec.priority if declared is None else declared,
                 evicted_by, self.mode.queue_of(spec.account, mr))
        p.n, p.per = self.pool.shape(spec)
        p.shape = self.shape_id(spec.gpus, p.n, p.per, spec.gpu_type)
        p.mr = mr
        p.session = self.sessions.session(spec)
        p.uid = self.acct.user_gpus.id_of(spec.account, spec.user)
        p.aid = self.acct.account_id(spec.account)
        p.key = self.mode.key(p)
        self._queue(p)

    def shape_id(self, gpus: int, n: int, per: int, gpu_type: str | None) -> int:
        """The id of the job shape (``gpus`` as ``n`` x ``per``, of ``gpu_type``), given on first sight."""
        k = (gpus, n, per, gpu_type)
        got = self._shape_ids.get(k)
        if got is None:
            got = self._shape_ids[k] = len(self._shape_ids)
        return got

    def on_lent_gpus(self, spec: JobSpec, pl: tuple[tuple[int, int], ...]) -> bool:
        """Does a run of ``spec`` on ``pl`` sit on lent session-pool GPUs (``core.session_pool``)?
        Such a run carries no protection, and a waiting session takes its GPUs back at once.  Read
        once, when the run starts (``Run.lent``), whether it starts here or is restored."""
        return bool(self.sessions.nodes) and self.sessions.lent(spec, pl)

    def add_running(
        self,
        spec: JobSpec,
        start: float,
        placement: tuple[tuple[str, int], ...],
        *,
        allocated: bool,
        protected_until: float,
        done_before: float = 0.0,
        declared: int | None = None,
        evicted_by: str | None = None,
        eligible: float | None = None,
        yields: bool = False,
        noticed_at: float | None = None,
    ) -> None:
        pl = tuple((self.pool.index[n], g) for n, g in placement)
        lent = self.on_lent_gpus(spec, pl)
        if lent:
            protected_until = min(protected_until, start)  # lent pool GPUs carry no protection
        r = Run(spec, start, pl, allocated, protected_until, done_before,
                spec.priority if declared is None else declared, evicted_by)
        r.lent = lent
        if eligible is not None:
            r.eligible = eligible
        r.yields = yields and allocated
        self.start(r, start)
        if noticed_at is not None:
            self.noticed[spec.id] = noticed_at

    def launched(self, job_id: str, at: float) -> None:
        """The backend ran the job at ``at``, after the pass that placed it (a latency profile's
        launch delay): its run counts from there, as a reconciler's core reads the backend's
        start, so its minimum runtime, its expected end and the work a preemption keeps
        (``evict``) all move with it."""
        r = self.stop(job_id)
        moved = Run(r.spec, at, r.placement, r.allocated, r.protected_until + (at - r.start),
                    r.done_before, r.declared, r.evicted_by)
        moved.eligible, moved.yields, moved.lent = r.eligible, r.yields, r.lent
        self.start(moved, at)

    def finish(self, job_id: str) -> Run:
        """The job completed (or was cancelled outside the scheduler): free its GPUs."""
        return self.stop(job_id)

    def set_health(self, node: str, healthy: bool, now: float) -> None:
        i = self.pool.index[node]
        self.version += 1
        self.grown.add_node(i)
        self.touched.add_node(i)
        self.released += 1
        self.pool.set_health(i, healthy)
        if healthy:
            self.unhealthy_since.pop(i, None)
        else:
            self.unhealthy_since.setdefault(i, now)

    # -- the pass's mutations (called by ``Starting`` and the scheduler, never a field set) ---
    def start(self, r: Run, now: float) -> None:
        self.version += 1
        if r.allocated and self.acct.alloc.get(r.account) and self._turns_over(r):
            self.donor_growth += 1
        self.pool.allocate(r.jid, r.placement, soft=not r.allocated)
        self.touched.add(r.placement)
        self.running[r.jid] = r
        self.acct.started(r)
        self.ends.started(r)
        self.running_gpus += r.gpus
        if not r.resumable:
            for i, g in r.placement:
                self.fixed_gpus[i] += g
        if r.protected_until <= now:  # preemptible at once: not growth (see __init__)
            self.acct.mark_preemptible(r)
        elif r.protected_until < math.inf:
            heappush(self.protect, (r.protected_until, r.jid))

    def _turns_over(self, r: Run) -> bool:
        """Does starting ``r`` take its account from at most to above what it is owed (the
        donors' test, ``preemption.terms``, with the same arithmetic)?"""
        alloc, owed = self.acct.alloc_gpus, self.owed(r.account)
        before = alloc.get(r.account, 0)
        after = before + r.gpus if r.account in alloc else before
        return before - owed <= 0 < after - owed

    def stop(self, job_id: str) -> Run:
        r = self.running.pop(job_id)
        self.noticed.pop(job_id, None)
        self.version += 1
        self.released += 1
        if r.allocated or job_id not in self.acct.preemptible or (self._keep_nonresumable and not r.resumable):
            self.grown.add(r.placement)  # not unallocated work a search could take (see __init__)
        self.pool.release(job_id, r.placement, soft=not r.allocated)
        self.touched.add(r.placement)
        self.ends.stopped(r, self.pool, self.running)
        self.acct.stopped(r)
        self.running_gpus -= r.gpus
        if not r.resumable:
            for i, g in r.placement:
                self.fixed_gpus[i] -= g
        return r

    def _queue(self, p: Pend) -> None:
        self.queued_version += 1
        self.pending[p.jid] = p
        self.queues.add(p)
        self.pending_gpus += p.gpus

    def requeue_unstarted(self, p: Pend) -> None:
        """A start of this pass taken back (``stop`` already freed its GPUs): ``p`` is pending
        again exactly as it was."""
        self._queue(p)

    def take_pending(self, job_id: str) -> Pend:
        self.queued_version += 1
        p = self.pending.pop(job_id)
        self.queues.remove(p)
        self.pending_gpus -= p.gpus
        return p

    def dependants_changed(self, job_id: str, declared: int) -> None:
        """The dependency pass changed what ``job_id`` may inherit from its same-team dependants
        (one came or went) and gives it effective declared priority ``declared``.  A queued
        job's record is made anew, as ``decide()`` makes every record of a tick from its
        snapshot: the kept orders and merges of its queue follow the queue's records (its
        version moves, as at an arrival), not the dependants map.  A running job is not scored;
        its declared priority is changed in place, with its team's counts, and the state's
        version moves (victim views read it)."""
        p = self.pending.get(job_id)
        if p is not None:
            self.take_pending(job_id)
            self.add_pending(p.spec, p.eligible, p.queued_since, done_work=p.done_work, declared=declared,
                             evicted_by=p.evicted_by)
            return
        r = self.running.get(job_id)
        if r is not None and r.declared != declared:
            self.acct.redeclare(r, declared)
            self.version += 1

    def expire_protections(self, now: float) -> None:
        """Jobs whose protection ended by ``now`` become preemptible."""
        while self.protect and self.protect[0][0] <= now:
            _, jid = heappop(self.protect)
            r = self.running.get(jid)
            if r is not None and r.protected_until <= now:
                self.version += 1
                self.grown.add(r.placement)
                if r.allocated:
                    self.own_growth[r.account] = self.own_growth.get(r.account, 0) + 1
                self.acct.mark_preemptible(r)

    def next_protection_end(self) -> float:
        """When the next running job's protection ends (stale entries dropped), or inf."""
        while self.protect:
            t, jid = self.protect[0]
            r = self.running.get(jid)
            if r is not None and r.protected_until == t:
                return t
            heappop(self.protect)
        return math.inf

    def evict(self, job_id: str, now: float, for_job: str | None, rule: str, reason: str) -> Preemption:
        """Stop a job and requeue it (or not) as the policy says (docs/design/preemption.md)."""
        noticed_at = self.noticed.get(job_id)
        r = self.stop(job_id)
        spec = r.spec
        ran = now - r.start
        pol = self.policy
        kept = base = 0.0
        if spec.resumable and pol.requeue_resumable:
            kept, base = kept_work(ran, spec.checkpoint_interval), r.done_before
        elif pol.non_resumable == "cancel":
            return Preemption(job_id, for_job, rule, ran, reason)
        if restored(pol.interactive, self.grace_of(spec), noticed_at):
            kept, base = ran, r.done_before  # the hook snapshots on the notice, restores on the restart
        self.add_pending(spec, r.eligible, now, done_work=base + kept, declared=r.declared, evicted_by=for_job)
        return Preemption(job_id, for_job, rule, ran - kept, reason)
