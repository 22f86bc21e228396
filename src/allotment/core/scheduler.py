"""The scheduling pass.  One ``Scheduler`` holds the state between passes; ``run_pass(now, usage)``
mutates it and returns the ``Decisions`` with their reasons.  Pure: no clock, no I/O, no
randomness; every ordering ends in a stable tie-break (job id, node order).

A pass, step by step:

1. protections that ran out by ``now`` make their jobs preemptible;
2. unhealthy nodes drain: jobs past their minimum runtime (and unallocated work at once) are
   requeued, an empty unhealthy node is reported ready for repair (docs/design/draining.md);
3. queues are ranked: in ``budgets`` mode one queue per leaf, tier 0 (the account runs less than
   its entitlement) before tier 1 (borrowing), each tier in Fair Tree order over window usage
   (docs/design/entitlement-tiers.md); the baselines use one global queue;
4. the best queue offers its best candidates (top ``queue_depth`` by declared priority and age,
   re-ordered by the full within-team score); the first that fits starts (best fit, gangs all or
   nothing, never delaying the reservation); the first blocked one may preempt
   (docs/design/preemption.md) or, if it is a gang, get the reservation
   (docs/design/reservation.md); a queue where nothing can start is done for this pass;
5. the pass stops when every queue is done.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping

from allotment.core.context import Context
from allotment.core.decisions import Decisions, NodeReport, Preemption, Ranked, Reservation, Start
from allotment.core.fairshare import LeafRank, rank_leaves
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.preemption import find_cap_victims, find_victims
from allotment.core.priority import score_parts
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend, Run

GLOBAL_QUEUE = "*"
FREE_SUFFIX = "#unallocated"  # queue of an account's unallocated work


class Scheduler:
    def __init__(self, ctx: Context, nodes: tuple[NodeState, ...]) -> None:
        self.ctx = ctx
        self.pool = NodePool(nodes)
        self.running: dict[str, Run] = {}
        self.pending: dict[str, Pend] = {}
        self.queues: dict[str, list[tuple[float, float, str]]] = {}
        self.alloc_gpus: dict[str, int] = dict.fromkeys(ctx.leaves, 0)  # charged GPUs running
        self.tree_gpus: dict[str, int] = dict.fromkeys(
            ctx.tree, 0
        )  # all GPUs running per tree node
        self.user_gpus: dict[tuple[str, str], int] = {}
        self.preemptible: dict[str, None] = {}  # running jobs past protection (ordered set)
        self.preemptible_unalloc: dict[str, None] = {}
        self.preemptible_alloc: dict[
            str, dict[str, None]
        ] = {}  # account -> allocated, past protection
        self.preemptible_unalloc_gpus = 0
        # per node: GPUs of jobs past their protection (what a victim search could free there)
        self.node_pre: list[int] = [0] * len(self.pool.names)
        # per node: when its last allocated job is expected to end (-inf: none; unallocated
        # work yields to a reservation at once, so it does not count)
        self.node_end: list[float] = [-math.inf] * len(self.pool.names)
        self.preemptible_alloc_gpus: dict[str, int] = {}
        self.preemptible_alloc_gpus_total = 0
        self._protect: list[tuple[float, str]] = []
        self.unhealthy_since: dict[int, float] = {}
        self.pending_gpus = 0
        self.running_gpus = 0
        self.caps = {n: t.max_gpus for n, t in ctx.tree.items() if t.max_gpus is not None}
        # change counters that let a pass skip queues nothing new can help
        self._qver: dict[str, int] = {}  # per queue: changes of its first ``_depth`` entries
        self._depth = ctx.queue_depth if ctx.mode == "budgets" else ctx.global_depth
        self._events = 0  # any change a blocked queue might care about (heads, victims)
        self._quiet: tuple[int, tuple[int, int, int, int], int] | None = None
        self._quiet_broken = False
        # which queues the next pass must look at (see ``_walk``): queues whose own state
        # changed, and what the last pass left, to tell whether anything global changed
        self._dirty: set[str] = set()
        self._walk_all = True
        self._last: tuple[tuple[int, int, int, int], int, int, float] | None = None
        # queue -> ((head version, own victims version), job that searched, when) of its last
        # failed victim search
        self._pfail: dict[str, tuple[tuple[int, int], str, float]] = {}
        self._unalloc_v = 0
        self._alloc_v: dict[str, int] = {}
        self._alloc_v_total = 0
        # queue -> (signature, capacity signature, look again at) when a pass found it blocked
        self._blocked: dict[
            str, tuple[tuple[object, int, int, int], tuple[int, int, int, int], float]
        ] = {}
        self._reservation: tuple[frozenset[int], float, str] | None = None
        self._res_key: tuple[int, int, str] = (0, 0, "")
        self._ranked_at: float | None = None
        self._ranks: tuple[LeafRank, ...] = ()
        self._rank_index: dict[str, int] = {}
        self._metric: dict[str, float] = {}
        self._ent: dict[str, float] = {}
        self._ent_for = -1
        self._mr: dict[str, float] = {}
        self._boosts: dict[str, float] = {}
        self._boosts_at = -math.inf
        self._capped: dict[str, tuple[tuple[str, int], ...]] = {}  # account -> max_gpus on its path
        self._res_cache: tuple[tuple[int, int, int, str | None], tuple[frozenset[int], float] | None] | None = None

    # -- state changes from outside (arrivals, completions, health) ------------------------
    def queue_of(self, spec: JobSpec) -> str:
        """Budgets: one queue per account for allocated work and one for its unallocated work
        (minimum runtime 0), ranked after every allocated queue: free work only fills capacity
        nobody with budget wants, so it should not start first and be evicted a tick later."""
        if self.ctx.mode != "budgets":
            return GLOBAL_QUEUE
        return spec.account if self.min_runtime(spec) > 0 else spec.account + FREE_SUFFIX

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
        q = self.queue_of(spec)
        p = Pend(
            spec,
            eligible,
            queued_since,
            done_work,
            spec.priority if declared is None else declared,
            evicted_by,
            q,
        )
        p.n, p.per = self.pool.shape(spec)
        p.mr = self.min_runtime(spec)
        if self.ctx.mode != "budgets":
            # the baselines: fifo knows no priority; under the old priority scheduler everyone
            # used the same (HIGH) level, so the order is submission order in both
            p.key = (0.0, eligible, spec.id)
        self.pending[spec.id] = p
        lst = self.queues.setdefault(q, [])
        at = bisect_left(lst, p.key)
        lst.insert(at, p.key)
        if at < self._depth:  # the queue's head (what a pass looks at) changed
            self._qver[q] = self._qver.get(q, 0) + 1
            self._dirty.add(q)
            self._events += 1
        self.pending_gpus += spec.gpus

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
    ) -> None:
        pl = tuple((self.pool.index[n], g) for n, g in placement)
        self._start(
            spec,
            start,
            pl,
            allocated,
            protected_until,
            done_before,
            spec.priority if declared is None else declared,
            evicted_by,
        )

    def finish(self, job_id: str) -> Run:
        """The job completed (or was cancelled outside the scheduler): free its GPUs."""
        return self._stop(job_id)

    def _beyond_limit(self, spec: JobSpec) -> bool:
        """Old priority scheduler only: the job would run beyond its team's non-preemptible
        limit, so it may only use idle GPUs (and does not stop later jobs from preempting)."""
        return (
            self.ctx.mode == "priority"
            and self.alloc_gpus.get(spec.account, 0) + spec.gpus
            > self.ctx.entitlement_gpus.get(spec.account, 0.0)
        )

    def expiry_matters(self, job_id: str, now: float) -> bool:
        """Does the end of ``job_id``'s protection at ``now`` need a pass right away?  Yes when
        it sits on an unhealthy node (it drains now) or a job of its own team with a higher
        declared priority waits (within-team slicing).  A reclaim by another team is not urgent:
        victim searches for other teams repeat on the ``preempt_retry_s`` grid anyway, and the
        next arrival or completion runs the pass that marks it preemptible."""
        r = self.running.get(job_id)
        if r is None or r.protected_until > now:
            return False
        if any(not self.pool.healthy[i] for i, _ in r.placement):
            return True
        q = self.queues.get(self.queue_of(r.spec))
        return q is not None and len(q) > 0 and -q[0][0] > r.declared

    def set_health(self, node: str, healthy: bool, now: float) -> None:
        i = self.pool.index[node]
        self.pool.set_health(i, healthy)
        if healthy:
            self.unhealthy_since.pop(i, None)
        else:
            self.unhealthy_since.setdefault(i, now)

    # -- internals ---------------------------------------------------------------------------
    def _start(
        self,
        spec: JobSpec,
        now: float,
        pl: tuple[tuple[int, int], ...],
        allocated: bool,
        protected_until: float,
        done_before: float,
        declared: int,
        evicted_by: str | None,
        eligible: float | None = None,
    ) -> Run:
        self.pool.allocate(spec.id, pl, soft=not allocated)
        r = Run(spec, now, pl, allocated, protected_until, done_before, declared, evicted_by)
        r.eligible = eligible if eligible is not None else spec.submit
        self.running[spec.id] = r
        if allocated:
            ends = self.node_end
            for i, _ in pl:
                if r.est_end > ends[i]:
                    ends[i] = r.est_end
        if allocated and spec.account in self.alloc_gpus:
            self._dirty.add(spec.account)
            before = self.alloc_gpus[spec.account]
            self.alloc_gpus[spec.account] += spec.gpus
            e = self.entitlement(spec.account)
            if before <= e < before + spec.gpus and self.preemptible_alloc.get(spec.account):
                self._alloc_v_total += 1  # its preemptible jobs just became reclaimable
                self._events += 1
        if allocated:  # caps (max_gpus) bound charged work; unallocated work is outside budgets
            for n in self.ctx.paths.get(spec.account, ()):
                self.tree_gpus[n] += spec.gpus
        k = (spec.account, spec.user)
        self.user_gpus[k] = self.user_gpus.get(k, 0) + spec.gpus
        self.running_gpus += spec.gpus
        if protected_until <= now:
            self._mark_preemptible(r)
        elif protected_until < math.inf:
            heapq.heappush(self._protect, (protected_until, spec.id))
        return r

    def _stop(self, job_id: str) -> Run:
        r = self.running.pop(job_id)
        spec = r.spec
        self.pool.release(job_id, r.placement, soft=not r.allocated)
        if r.allocated:
            running = self.running
            for i, _ in r.placement:
                self.node_end[i] = max(
                    (running[j].est_end for j in self.pool.jobs[i] if running[j].allocated),
                    default=-math.inf,
                )
        if r.allocated and spec.account in self.alloc_gpus:
            self._dirty.add(spec.account)
            self.alloc_gpus[spec.account] -= spec.gpus
        if r.allocated:
            for n in self.ctx.paths.get(spec.account, ()):
                self.tree_gpus[n] -= spec.gpus
        self.user_gpus[(spec.account, spec.user)] -= spec.gpus
        self.running_gpus -= spec.gpus
        if self.preemptible.pop(job_id, 0) is None:
            for i, g in r.placement:
                self.node_pre[i] -= g
            if r.allocated:
                del self.preemptible_alloc[spec.account][job_id]
                self.preemptible_alloc_gpus[spec.account] -= spec.gpus
                self.preemptible_alloc_gpus_total -= spec.gpus
            else:
                del self.preemptible_unalloc[job_id]
                self.preemptible_unalloc_gpus -= spec.gpus
        return r

    def _mark_preemptible(self, r: Run) -> None:
        jid = r.spec.id
        if jid in self.preemptible:
            return
        self.preemptible[jid] = None
        for i, g in r.placement:
            self.node_pre[i] += g
        if r.allocated:
            acct = r.spec.account
            self.preemptible_alloc.setdefault(acct, {})[jid] = None
            self.preemptible_alloc_gpus[acct] = self.preemptible_alloc_gpus.get(acct, 0) + r.spec.gpus
            self.preemptible_alloc_gpus_total += r.spec.gpus
            self._alloc_v[acct] = self._alloc_v.get(acct, 0) + 1
            self._dirty.add(acct)
            self._events += 1
            if self.alloc_gpus.get(acct, 0) > self.entitlement(acct):
                self._alloc_v_total += 1  # reclaimable by accounts below their entitlement
        else:
            self.preemptible_unalloc[jid] = None  # counted as soft capacity by the pool
            self.preemptible_unalloc_gpus += r.spec.gpus

    def _take_pending(self, job_id: str) -> Pend:
        p = self.pending.pop(job_id)
        q = self.queues[p.queue]
        at = _index(q, p.key)
        q.pop(at)
        if at < self._depth:
            self._qver[p.queue] = self._qver.get(p.queue, 0) + 1
            self._dirty.add(p.queue)
            self._events += 1
        self.pending_gpus -= p.spec.gpus
        return p

    def min_runtime(self, spec: JobSpec) -> float:
        """The declared minimum runtime clamped to the policy cap (the default when unset)."""
        mr = self._mr.get(spec.id)
        if mr is None:
            pol = self.ctx.policy
            declared = (
                spec.min_runtime if spec.min_runtime is not None else float(pol.default_min_runtime_s)
            )
            mr = self._mr[spec.id] = max(0.0, min(declared, float(pol.min_runtime_cap_s)))
        return mr

    def entitlement(self, leaf: str) -> float:
        """GPUs owed to ``leaf`` now: its share of the healthy capacity."""
        cap = self.ctx.capacity_gpus
        return self.ctx.entitlement_gpus.get(leaf, 0.0) * (self.pool.healthy_total / cap if cap else 0.0)

    def _cap_path(self, account: str) -> tuple[tuple[str, int], ...]:
        """The (node, max_gpus) pairs on ``account``'s path, root to leaf."""
        capped = self._capped.get(account)
        if capped is None:
            capped = self._capped[account] = tuple(
                (n, self.caps[n]) for n in self.ctx.paths.get(account, ()) if n in self.caps
            )
        return capped

    def ceiling(self, account: str) -> int | None:
        """The tightest max_gpus on ``account``'s path (None: uncapped)."""
        capped = self._cap_path(account)
        return min(cap for _, cap in capped) if capped else None

    def could_ever_fit(self, spec: JobSpec) -> bool:
        """False when the job is larger than a max_gpus cap on its account's path."""
        c = self.ceiling(spec.account)
        return c is None or spec.gpus <= c

    def cap_excess(self, account: str, gpus: int) -> int:
        """GPUs that must stop under ``account``'s caps before ``gpus`` more can run there
        (0 or less: they fit now)."""
        return max((self.tree_gpus[n] + gpus - cap for n, cap in self._cap_path(account)), default=0)

    def _fits_caps(self, account: str, gpus: int) -> bool:
        return not self._cap_path(account) or self.cap_excess(account, gpus) <= 0

    # -- the pass ----------------------------------------------------------------------------
    def run_pass(self, now: float, usage: Mapping[str, float], *, explain: bool = False) -> Decisions:
        starts: list[Start] = []
        preemptions: list[Preemption] = []
        # 1. protections that ran out
        while self._protect and self._protect[0][0] <= now:
            _, jid = heapq.heappop(self._protect)
            r = self.running.get(jid)
            if r is not None and r.protected_until <= now:
                self._mark_preemptible(r)
        # nothing a blocked queue could use has changed since a pass that started nothing:
        # skip (tiers and Fair Tree ranks only change the order among queues, not blocked-ness)
        healthy_key = self.pool.healthy_total
        # liveness guard: with nothing running no later completion will come to un-skip a
        # queue, so an idle cluster always gets a full look
        explain_all = explain or not self.running
        if (
            not explain_all
            and not self.unhealthy_since
            and (self._reservation is None or now < self._reservation[1])
            and self._quiet is not None
            and self._quiet[0] == self._events
            and self._quiet[2] == healthy_key
            and _covers(self._quiet[1], self.pool.capacity_signature())
            and (self._last is None or now < self._last[3])  # no put-off search due
        ):
            return Decisions()
        # 2. drain unhealthy nodes
        reports = self._drain(now, preemptions) if self.unhealthy_since else ()
        # 3. rank queues (Fair Tree is refreshed every fairshare_refresh_s, like Slurm's
        #    PriorityCalcPeriod; tiers follow running GPUs at once)
        ent = self._entitlements()
        if self.ctx.mode == "budgets" and (explain or self._ranked_at is None or now - self._ranked_at >= self.ctx.fairshare_refresh_s):
            self._ranks = rank_leaves(self.ctx, usage)
            self._rank_index = {r.leaf: r.rank for r in self._ranks}
            self._metric = {leaf: _leaf_metric(usage.get(leaf, 0.0), e) for leaf, e in ent.items()}
            self._ranked_at = now
        rank_index = self._rank_index
        worst = len(rank_index)

        def qkey(q: str) -> tuple[int, int, str]:
            if q == GLOBAL_QUEUE:
                return (0, 0, q)
            tier = self._tier(q, ent)
            return (tier, rank_index.get(q[: -len(FREE_SUFFIX)] if tier == 2 else q, worst), q)

        # 4. walk the queues, best first; a queue found blocked is skipped until something it
        #    could use changed (more free GPUs, new victims, its own queue or tier)
        blocked_map = self._blocked
        capsig = self.pool.capacity_signature
        tried: set[str] = set()
        reservations: list[Reservation] = []
        res = self._reservation
        if res is not None and res[2] not in self.pending:
            res = None
            self._reservation = None
            self._blocked.clear()  # queues it held back may fit now
            self._walk_all = True
        heap = [(qkey(q), q) for q in self._walk(now, explain_all, ent, res) if self.queues.get(q)]
        heapq.heapify(heap)
        load = (self.pending_gpus + self.running_gpus) / max(1, self.ctx.capacity_gpus)
        depth = self.ctx.queue_depth if self.ctx.mode == "budgets" else self.ctx.global_depth
        retry = self.ctx.preempt_retry_s
        can_preempt = self.ctx.mode != "fifo"
        while heap:
            qk, q = heapq.heappop(heap)
            blocked = blocked_map.get(q)
            due = res is not None and now >= res[1] and res[2] in self.pending and self.pending[res[2]].queue == q
            if (
                not explain_all
                and not due
                and blocked is not None
                and now < blocked[2]
                and blocked[0] == self._signature(q, qk[0], depth)
                and (blocked[1] is capsig() or _covers(blocked[1], capsig()))
            ):
                continue
            # may this queue search for victims now?  Always after a change to its own head or
            # its own team's victims; after any other change only once per ``retry`` seconds
            psig = (self._qver.get(q, 0), self._alloc_v.get(q, 0))
            pf = self._pfail.get(q)
            search = (
                can_preempt
                and qk[0] < 2
                and (explain_all or due or pf is None or pf[0] != psig or now >= _grid(pf[2], retry))
            )
            # when to look again if this pass puts a search off: the grid after the failed one
            again = _grid(pf[2], retry) if can_preempt and qk[0] < 2 and pf is not None else math.inf
            head = self._head(q, depth, tried)
            if not search and not due and not explain_all and not self._any_fits(head):
                # nothing fits and no victim search is due: skip without ranking the head
                blocked_map[q] = (self._signature(q, qk[0], depth), capsig(), again)
                continue
            cands = self._rank_head(head, now, load)
            progressed = False
            first_blocked = True
            searched = False
            for p in cands:
                spec = p.spec
                n, per = p.n, p.per
                if n == 0:
                    tried.add(p.jid)
                    continue
                if p.mr > 0 and not self._fits_caps(p.account, p.gpus):
                    # over a max_gpus cap: only the team's own lower-priority work past its
                    # protection can make room (a capped team slices its own time too)
                    tried.add(spec.id)
                    if can_preempt and p.declared > 0 and self.preemptible_alloc_gpus.get(spec.account, 0):
                        got = self._try_cap_preempt(p, n, per, now, preemptions, qk)
                        if got is not None:
                            starts.append(got)
                            progressed = True
                            break
                    continue
                allow = None
                if (
                    res is not None
                    and spec.id != res[2]
                    and p.mr > 0  # unallocated work may use reserved nodes: it yields at once
                    and now + max(0.0, spec.work - p.done_work) > res[1]
                ):
                    rnodes = res[0]

                    def allow(i: int, rnodes: frozenset[int] = rnodes) -> bool:
                        return i not in rnodes

                pl = self.pool.find(spec, n, per, allow) if per <= self.pool.max_free() else None
                if pl is not None:
                    starts.append(self._launch(p, pl, now, "fits free GPUs", qk))
                    progressed = True
                    if res is not None and res[2] == spec.id:
                        res = None  # the holder started: what it held back gets another look
                        blocked_map.clear()
                        self._walk_all = True
                        tried.clear()
                        heap = [(qkey(x), x) for x, lst in self.queues.items() if lst and x != q]
                        heapq.heapify(heap)
                    break
                tried.add(spec.id)
                if first_blocked and p.mr > 0 and not self._beyond_limit(spec):
                    first_blocked = False
                    if search and not (
                        # the same job failed with the same own-team victims: a new job
                        # further down the head is no reason to search again before the grid
                        pf is not None
                        and pf[1] == spec.id
                        and pf[0][1] == psig[1]
                        and not (explain_all or due)
                        and now < _grid(pf[2], retry)
                    ):
                        searched = True
                        got = self._try_preempt(p, n, per, now, ent, self._metric, preemptions, qk)
                        if got is not None:
                            starts.append(got)
                            progressed = True
                            self._pfail.pop(q, None)
                            break
                        self._pfail[q] = (psig, spec.id, now)
                    if n > 1 and (res is None or res[2] == spec.id or self._res_key > qk):
                        new = self._reserve(spec, n, per, now)
                        if new is not None and new[1] <= now:
                            # only the old reservation stood in the way: it starts now
                            pl = self.pool.find(spec, n, per)
                            if pl is not None:
                                res = None
                                starts.append(self._launch(p, pl, now, "fits free GPUs", qk))
                                progressed = True
                                break
                        if new is not None:
                            res = new
                            self._res_key = qk
                            reservations.append(
                                Reservation(
                                    spec.id,
                                    tuple(self.pool.names[i] for i in sorted(new[0])),
                                    new[1],
                                    f"highest-ranked blocked gang ({spec.gpus} GPUs); smaller jobs backfill only if they end first",
                                )
                            )
            if progressed:
                blocked_map.pop(q, None)
                if self.queues[q]:
                    heapq.heappush(heap, (qkey(q), q))
            else:
                blocked_map[q] = (
                    self._signature(q, qk[0], depth),
                    capsig(),
                    math.inf if searched else again,  # a put-off search: look again then
                )
        if res != self._reservation:
            # queues blocked by the old reservation may fit now: look at every queue again
            self._blocked.clear()
            self._quiet_broken = True
            self._walk_all = True
        self._reservation = res
        again = min((b[2] for b in blocked_map.values()), default=math.inf)
        self._last = (capsig(), self._alloc_v_total, healthy_key, again)
        self._quiet = (
            (self._events, self.pool.capacity_signature(), healthy_key)
            if not starts and not preemptions and not self._quiet_broken
            else None
        )
        self._quiet_broken = False
        if res is not None and not reservations:
            reservations.append(Reservation(res[2], tuple(self.pool.names[i] for i in sorted(res[0])), res[1], "held from an earlier pass"))
        order = self._order(now, usage, ent, self._ranks, load) if explain else ()
        return Decisions(
            tuple(starts),
            tuple(preemptions),
            tuple(reservations),
            reports,
            order,
            again if again < math.inf else None,
        )

    def _walk(
        self,
        now: float,
        explain_all: bool,
        ent: Mapping[str, float],
        res: tuple[frozenset[int], float, str] | None,
    ) -> Iterable[str]:
        """The queues this pass must look at.  A queue left blocked by the last pass can only
        unblock through a change to itself (marked dirty where it happens), more capacity, new
        reclaimable victims (tier 0), a health change or a put-off search coming due; when none
        of the global ones happened only the dirty queues (and the reservation holder's) are
        walked, which keeps a pass after one arrival or one expiry cheap."""
        last = self._last
        dirty = self._dirty
        self._dirty = set()
        if explain_all or self._walk_all or last is None or last[2] != self.pool.healthy_total:
            self._walk_all = False
            return list(self.queues)
        cs = self.pool.capacity_signature()
        blocked = self._blocked
        grew = not _covers(last[0], cs)
        due = now >= last[3]
        if grew or due:
            for q, b in blocked.items():
                if now >= b[2] or (b[1] is not cs and not _covers(b[1], cs)):
                    dirty.add(q)
        if last[1] != self._alloc_v_total:  # new reclaimable victims: tier-0 queues may use them
            dirty |= {q for q in ent if self._tier(q, ent) == 0}
        if res is not None and res[2] in self.pending:
            dirty.add(self.pending[res[2]].queue)
        dirty |= {q for q in self.queues if q not in blocked}
        return dirty  # order does not matter: the pass heap-orders them by a unique key

    def _tier(self, q: str, ent: Mapping[str, float]) -> int:
        """0: the account runs below its entitlement; 1: at or above it (borrowing); 2: the
        queue of its unallocated work (docs/design/entitlement-tiers.md)."""
        if q.endswith(FREE_SUFFIX):
            return 2
        return 0 if self.alloc_gpus.get(q, 0) < ent.get(q, 0.0) else 1

    def _signature(self, q: str, tier: int, depth: int) -> tuple[object, int, int, int]:
        """What a blocked queue could newly use: its head candidates, the unallocated victims,
        its own account's victims, and (tier 0 only) every account's victims."""
        return (
            self._qver.get(q, 0),
            0,
            self._alloc_v.get(q, 0),
            self._alloc_v_total if tier == 0 else -1 - tier,
        )

    def _entitlements(self) -> dict[str, float]:
        healthy = self.pool.healthy_total
        if self._ent_for != healthy:
            cap = self.ctx.capacity_gpus
            f = healthy / cap if cap else 0.0
            self._ent = {leaf: e * f for leaf, e in self.ctx.entitlement_gpus.items()}
            self._ent_for = healthy
        return self._ent

    def _head(self, q: str, depth: int, tried: set[str]) -> list[Pend]:
        """The first ``depth`` not yet tried jobs of queue ``q`` by declared priority and age."""
        out: list[Pend] = []
        pending = self.pending
        for key in self.queues[q]:
            if key[2] in tried:
                continue
            out.append(pending[key[2]])
            if len(out) >= depth:
                break
        return out

    def _any_fits(self, head: list[Pend]) -> bool:
        """Could any job of ``head`` fit the free GPUs (a cheap necessary condition)?"""
        maxfree = self.pool.max_free()
        return any(0 < p.per <= maxfree for p in head)

    def _rank_head(self, out: list[Pend], now: float, load: float) -> list[Pend]:
        """``out`` re-ordered by the full within-team score (core.priority)."""
        if self.ctx.mode != "budgets" or len(out) < 2:
            return out
        maxfree = self.pool.max_free()
        # core.priority's score, inlined for the hot loop (tests check the two agree)
        w = self.ctx.policy.priority_weights
        cap = float(w.age_cap_s)
        cap_div = max(1.0, cap)
        fit_w = w.fit * min(3.0, max(1.0, load))
        ug = self.user_gpus
        boosts = self._active_boosts(now)
        w_declared, w_age, w_fair, w_deadline = w.declared, w.age, w.fairness, w.deadline
        scored = []
        for p in out:
            age = now - p.eligible
            age = 0.0 if age < 0 else (cap if age > cap else age)
            sc = (
                w_declared * p.declared
                + w_age * age / cap_div
                + w_fair / (1.0 + ug.get((p.account, p.user), 0) / 8.0)
                + (fit_w if p.gpus <= maxfree else 0.0)
            )
            deadline = p.spec.deadline
            if deadline is not None:
                slack = deadline - now - (p.spec.work - p.done_work)
                sc += w_deadline * (1.0 if slack <= 0 else 1.0 / (1.0 + slack / 3600.0))
            if boosts:
                sc += boosts.get("job:" + p.jid, 0.0) + boosts.get("user:" + p.user, 0.0)
                sc += boosts.get("account:" + p.account, 0.0)
            scored.append((-sc, p.eligible, p.jid, p))
        scored.sort(key=lambda x: (x[0], x[1], x[2]))
        return [x[3] for x in scored]

    def _active_boosts(self, now: float) -> dict[str, float]:
        """Boost amounts by target that have not expired at ``now`` (one computation per time)."""
        if self._boosts_at == now:
            return self._boosts
        out: dict[str, float] = {}
        for b in self.ctx.policy.boosts:
            if now < self.ctx.boost_expiry_s(b.expires):
                out[b.target] = out.get(b.target, 0.0) + b.amount
        self._boosts, self._boosts_at = out, now
        return out

    def _score(self, p: Pend, now: float, load: float, maxfree: int) -> float:
        spec = p.spec
        return sum(
            score_parts(
                self.ctx,
                spec,
                declared=p.declared,
                now=now,
                eligible=p.eligible,
                remaining=spec.work - p.done_work,
                fits=spec.gpus <= maxfree,
                user_running_gpus=self.user_gpus.get((spec.account, spec.user), 0),
                load=load,
            )
        )

    def _launch(
        self,
        p: Pend,
        pl: tuple[tuple[int, int], ...],
        now: float,
        why: str,
        qk: tuple[int, int, str],
    ) -> Start:
        spec = p.spec
        self._take_pending(spec.id)
        mr = self.min_runtime(spec)
        mode = self.ctx.mode
        if mode == "budgets":
            allocated = mr > 0
            protected = now + min(mr, max(0.0, spec.work - p.done_work)) if allocated else now
            reason = f"{why}; tier {qk[0]}, fair-share rank {qk[1]}"
        elif mode == "priority":
            limit = self.ctx.entitlement_gpus.get(spec.account, 0.0)
            allocated = mr > 0 and self.alloc_gpus.get(spec.account, 0) + spec.gpus <= limit
            protected = math.inf if allocated else now
            reason = (
                f"{why}; {'within' if allocated else 'beyond'} the team's non-preemptible limit"
            )
        else:
            allocated = mr > 0
            protected = math.inf
            reason = f"{why}; first come, first served"
        self._start(
            spec, now, pl, allocated, protected, p.done_work, p.declared, p.evicted_by, p.eligible
        )
        return Start(spec.id, tuple((self.pool.names[i], g) for i, g in pl), allocated, reason)

    def _evict(
        self, job_id: str, now: float, for_job: str | None, rule: str, reason: str
    ) -> Preemption:
        r = self._stop(job_id)
        spec = r.spec
        ran = now - r.start
        pol = self.ctx.policy
        if spec.resumable and pol.requeue_resumable:
            ci = spec.checkpoint_interval
            kept = ran if ci is None or ci <= 0 else math.floor(ran / ci) * ci
            self.add_pending(
                spec,
                _eligible(r, spec),
                now,
                done_work=r.done_before + kept,
                declared=r.declared,
                evicted_by=for_job,
            )
        elif pol.non_resumable == "cancel":
            kept = 0.0
        else:
            kept = 0.0
            self.add_pending(
                spec,
                _eligible(r, spec),
                now,
                done_work=0.0,
                declared=r.declared,
                evicted_by=for_job,
            )
        return Preemption(job_id, for_job, rule, ran - kept, reason)

    def _try_preempt(
        self,
        p: Pend,
        n: int,
        per: int,
        now: float,
        ent: Mapping[str, float],
        metric: Mapping[str, float],
        out: list[Preemption],
        qk: tuple[int, int, str],
    ) -> Start | None:
        if self.ctx.mode == "fifo" or not self.preemptible:
            return None
        found = find_victims(self, p, n, per, now, ent, metric)
        if found is None:
            return None
        victims, _ = found
        for vid, rule, why in victims:
            out.append(self._evict(vid, now, p.spec.id, rule, why))
        pl = self.pool.find(p.spec, n, per)
        if pl is None:  # cannot happen: victims were chosen to free exactly this
            raise AssertionError(f"preemption for {p.spec.id} did not free enough GPUs")
        return self._launch(p, pl, now, f"preempted {len(victims)} job(s)", qk)

    def _try_cap_preempt(
        self,
        p: Pend,
        n: int,
        per: int,
        now: float,
        out: list[Preemption],
        qk: tuple[int, int, str],
    ) -> Start | None:
        found = find_cap_victims(self, p, n, per, now)
        if found is None:
            return None
        for vid in found:
            out.append(
                self._evict(vid, now, p.spec.id, "within-team", f"lower within-team priority than {p.spec.id}; makes room under the team's max_gpus")
            )
        pl = self.pool.find(p.spec, n, per)
        if pl is None or not self._fits_caps(p.account, p.gpus):  # cannot happen: chosen for both
            raise AssertionError(f"cap preemption for {p.spec.id} did not make room")
        return self._launch(p, pl, now, f"preempted {len(found)} job(s) of its own team", qk)

    def _reserve(
        self, spec: JobSpec, n: int, per: int, now: float
    ) -> tuple[frozenset[int], float, str] | None:
        """The ``n`` nodes that can hold ``per`` GPUs of ``spec`` soonest, and when.  Cached by
        pool version: running jobs' expected ends only change when the pool does."""
        key = (self.pool.version, n, per, spec.gpu_type)
        c = self._res_cache
        if c is None or c[0] != key:
            c = self._res_cache = (key, self._reserve_nodes(spec.gpu_type, n, per))
        if c[1] is None:
            return None
        nodes, at = c[1]
        return (nodes, max(now, at), spec.id)

    def _reserve_nodes(
        self, gpu_type: str | None, n: int, per: int
    ) -> tuple[frozenset[int], float] | None:
        ends, free = self.node_end, self.pool.free
        free_at = [(-math.inf if free[i] >= per else ends[i], i) for i in self.pool.hosts(per, gpu_type)]
        if len(free_at) < n:
            return None
        chosen = heapq.nsmallest(n, free_at)
        return (frozenset(i for _, i in chosen), chosen[-1][0])

    def _drain(self, now: float, out: list[Preemption]) -> tuple[NodeReport, ...]:
        reports: list[NodeReport] = []
        threshold = self.ctx.policy.human_drain_threshold_s
        for i in sorted(self.unhealthy_since):
            since = self.unhealthy_since[i]
            for jid in sorted(self.pool.jobs[i]):
                if jid in self.preemptible:
                    out.append(
                        self._evict(
                            jid, now, None, "drain", f"node {self.pool.names[i]} is unhealthy"
                        )
                    )
            waiting = tuple(sorted(self.pool.jobs[i]))
            if not waiting:
                reports.append(
                    NodeReport(
                        self.pool.names[i],
                        "ready-for-repair",
                        (),
                        False,
                        "empty: no job left on it",
                    )
                )
                continue
            human = any(self.running[j].protected_until - since > threshold for j in waiting)
            reports.append(
                NodeReport(
                    self.pool.names[i],
                    "draining",
                    waiting,
                    human,
                    "waiting for minimum runtimes to end"
                    + ("; a job is protected past the human-drain threshold" if human else ""),
                )
            )
        return tuple(reports)

    def _order(
        self,
        now: float,
        usage: Mapping[str, float],
        ent: Mapping[str, float],
        ranks: Iterable[object],
        load: float,
    ) -> tuple[Ranked, ...]:
        """The full pending order with its metrics (for explain; not needed to decide)."""
        rank_of = {r.leaf: r for r in ranks if isinstance(r, LeafRank)}
        maxfree = self.pool.max_free()
        rows = []
        for p in self.pending.values():
            q = p.queue
            r = rank_of.get(p.spec.account)
            tier = 0 if q == GLOBAL_QUEUE else self._tier(q, ent)
            s = self._score(p, now, load, maxfree) if self.ctx.mode == "budgets" else -p.key[0]
            rank = r.rank if r is not None else 0
            key = (
                (tier, rank, -s, p.eligible, p.spec.id)
                if self.ctx.mode == "budgets"
                else (*p.key, 0, "")
            )
            rows.append((key, p, tier, r, s))
        rows.sort(key=lambda x: x[0])
        out = []
        for pos, (_, p, tier, r, s) in enumerate(rows):
            fs = r.level_fair_share if r is not None else ()
            why = (
                f"{_TIER_WHY[tier]}; "
                f"fair-share rank {r.rank if r else '-'}; within-team score {s:.3f}"
                if self.ctx.mode == "budgets"
                else f"{self.ctx.mode}: priority {p.declared}, eligible at {p.eligible:.0f}s"
            )
            out.append(Ranked(p.spec.id, p.spec.account, pos, tier, fs, s, why))
        return tuple(out)


_TIER_WHY = (
    "its account runs below its entitlement",
    "its account runs at or above its entitlement",
    "unallocated work: fills what allocated work leaves",
)


def _grid(failed_at: float, retry: float) -> float:
    """When a search that failed at ``failed_at`` may run again: the next point of a shared
    ``retry`` grid at least ``retry`` later, so searches put off by different queues come due
    together in one pass instead of one pass each."""
    return (math.floor(failed_at / retry) + 2) * retry if retry > 0 else failed_at


def _covers(old: tuple[int, int, int, int], new: tuple[int, int, int, int]) -> bool:
    """True when the capacity ``new`` offers nothing ``old`` did not (no bigger hole, no more
    empty nodes)."""
    return new[0] <= old[0] and new[1] <= old[1] and new[2] <= old[2] and new[3] <= old[3]


def _eligible(r: Run, spec: JobSpec) -> float:
    return r.eligible


def _leaf_metric(usage_gpu_hours: float, entitlement_gpus: float) -> float:
    """Usage over entitlement (hours of the entitlement used); lower = more under-served."""
    if entitlement_gpus <= 0:
        return math.inf
    return usage_gpu_hours / entitlement_gpus


def _index(lst: list[tuple[float, float, str]], key: tuple[float, float, str]) -> int:
    from bisect import bisect_left

    i = bisect_left(lst, key)
    if i >= len(lst) or lst[i] != key:
        raise KeyError(key[2])
    return i
