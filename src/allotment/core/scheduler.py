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
from bisect import insort
from collections.abc import Iterable, Mapping

from allotment.core.context import Context
from allotment.core.decisions import Decisions, NodeReport, Preemption, Ranked, Reservation, Start
from allotment.core.fairshare import rank_leaves
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.preemption import find_victims
from allotment.core.priority import score
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend, Run

GLOBAL_QUEUE = "*"


class Scheduler:
    def __init__(self, ctx: Context, nodes: tuple[NodeState, ...]) -> None:
        self.ctx = ctx
        self.pool = NodePool(nodes)
        self.running: dict[str, Run] = {}
        self.pending: dict[str, Pend] = {}
        self.queues: dict[str, list[tuple[float, float, str]]] = {}
        self.alloc_gpus: dict[str, int] = dict.fromkeys(ctx.leaves, 0)  # charged GPUs running
        self.tree_gpus: dict[str, int] = dict.fromkeys(ctx.tree, 0)  # all GPUs running per tree node
        self.user_gpus: dict[tuple[str, str], int] = {}
        self.preemptible: dict[str, None] = {}  # running jobs past protection (ordered set)
        self.preemptible_unalloc: dict[str, None] = {}
        self.preemptible_alloc: dict[str, dict[str, None]] = {}  # account -> allocated, past protection
        self._protect: list[tuple[float, str]] = []
        self.unhealthy_since: dict[int, float] = {}
        self.pending_gpus = 0
        self.running_gpus = 0
        self.caps = {n: t.max_gpus for n, t in ctx.tree.items() if t.max_gpus is not None}

    # -- state changes from outside (arrivals, completions, health) ------------------------
    def queue_of(self, spec: JobSpec) -> str:
        return spec.account if self.ctx.mode == "budgets" else GLOBAL_QUEUE

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
        p = Pend(spec, eligible, queued_since, done_work, spec.priority if declared is None else declared, evicted_by, q)
        self.pending[spec.id] = p
        insort(self.queues.setdefault(q, []), p.key)
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
        self._start(spec, start, pl, allocated, protected_until, done_before, spec.priority if declared is None else declared, evicted_by)

    def finish(self, job_id: str) -> Run:
        """The job completed (or was cancelled outside the scheduler): free its GPUs."""
        return self._stop(job_id)

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
        self.pool.allocate(spec.id, pl)
        r = Run(spec, now, pl, allocated, protected_until, done_before, declared, evicted_by)
        r.eligible = eligible if eligible is not None else spec.submit
        self.running[spec.id] = r
        if allocated and spec.account in self.alloc_gpus:
            self.alloc_gpus[spec.account] += spec.gpus
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
        self.pool.release(job_id, r.placement)
        if r.allocated and spec.account in self.alloc_gpus:
            self.alloc_gpus[spec.account] -= spec.gpus
        if r.allocated:
            for n in self.ctx.paths.get(spec.account, ()):
                self.tree_gpus[n] -= spec.gpus
        self.user_gpus[(spec.account, spec.user)] -= spec.gpus
        self.running_gpus -= spec.gpus
        if self.preemptible.pop(job_id, 0) is None:
            if r.allocated:
                del self.preemptible_alloc[spec.account][job_id]
            else:
                del self.preemptible_unalloc[job_id]
        return r

    def _mark_preemptible(self, r: Run) -> None:
        jid = r.spec.id
        if jid in self.preemptible:
            return
        self.preemptible[jid] = None
        if r.allocated:
            self.preemptible_alloc.setdefault(r.spec.account, {})[jid] = None
        else:
            self.preemptible_unalloc[jid] = None

    def _take_pending(self, job_id: str) -> Pend:
        p = self.pending.pop(job_id)
        q = self.queues[p.queue]
        q.pop(_index(q, p.key))
        self.pending_gpus -= p.spec.gpus
        return p

    def min_runtime(self, spec: JobSpec) -> float:
        pol = self.ctx.policy
        declared = spec.min_runtime if spec.min_runtime is not None else float(pol.default_min_runtime_s)
        return max(0.0, min(declared, float(pol.min_runtime_cap_s)))

    def entitlement(self, leaf: str) -> float:
        """GPUs owed to ``leaf`` now: its share of the healthy capacity."""
        cap = self.ctx.capacity_gpus
        healthy = self.pool.healthy_gpus()
        return self.ctx.entitlement_gpus.get(leaf, 0.0) * (healthy / cap if cap else 0.0)

    def could_ever_fit(self, spec: JobSpec) -> bool:
        """False when the job is larger than a max_gpus cap on its account's path."""
        return all(
            self.caps.get(n) is None or spec.gpus <= (self.caps.get(n) or 0)
            for n in self.ctx.paths.get(spec.account, ())
        )

    def _within_caps(self, spec: JobSpec) -> bool:
        for n in self.ctx.paths.get(spec.account, ()):
            cap = self.caps.get(n)
            if cap is not None and self.tree_gpus[n] + spec.gpus > cap:
                return False
        return True

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
        # 2. drain unhealthy nodes
        reports = self._drain(now, preemptions)
        # 3. rank queues
        ent = {leaf: self.entitlement(leaf) for leaf in self.ctx.leaves}
        ranks = rank_leaves(self.ctx, usage) if self.ctx.mode == "budgets" else ()
        rank_of = {r.leaf: r for r in ranks}
        metric = {leaf: _leaf_metric(usage.get(leaf, 0.0), e) for leaf, e in ent.items()}

        def qkey(q: str) -> tuple[int, int, str]:
            if q == GLOBAL_QUEUE:
                return (0, 0, q)
            r = rank_of.get(q)
            tier = 0 if self.alloc_gpus.get(q, 0) < ent.get(q, 0.0) else 1
            return (tier, r.rank if r is not None else len(rank_of), q)

        # 4. walk the queues
        done: set[str] = set()
        tried: set[str] = set()
        reservation: tuple[frozenset[int], float, str] | None = None
        reservations: list[Reservation] = []
        load = (self.pending_gpus + self.running_gpus) / max(1, self.ctx.capacity_gpus)
        depth = self.ctx.queue_depth if self.ctx.mode == "budgets" else self.ctx.global_depth
        while True:
            live = [q for q, lst in self.queues.items() if lst and q not in done]
            if not live:
                break
            q = min(live, key=qkey)
            cands = self._candidates(q, depth, tried, now, load)
            progressed = False
            first_blocked = True
            for p in cands:
                spec = p.spec
                n, per = self.pool.shape(spec)
                if n == 0:
                    tried.add(spec.id)
                    continue
                if self.min_runtime(spec) > 0 and not self._within_caps(spec):
                    tried.add(spec.id)
                    continue
                allow = None
                if reservation is not None and spec.id != reservation[2]:
                    rnodes, at, _ = reservation
                    fits_before = now + max(0.0, spec.work - p.done_work) <= at
                    if not fits_before:
                        def allow(i: int, rnodes: frozenset[int] = rnodes) -> bool:
                            return i not in rnodes
                pl = self.pool.find(spec, n, per, allow)
                if pl is not None:
                    starts.append(self._launch(p, pl, now, "fits free GPUs", qkey(q)))
                    progressed = True
                    break
                tried.add(spec.id)
                if first_blocked:
                    first_blocked = False
                    got = self._try_preempt(p, n, per, now, ent, metric, preemptions, qkey(q))
                    if got is not None:
                        starts.append(got)
                        progressed = True
                        break
                    if n > 1 and reservation is None:
                        reservation = self._reserve(spec, n, per, now)
                        if reservation is not None:
                            reservations.append(
                                Reservation(
                                    spec.id,
                                    tuple(self.pool.names[i] for i in sorted(reservation[0])),
                                    reservation[1],
                                    f"highest-ranked blocked gang ({spec.gpus} GPUs); smaller jobs backfill only if they end first",
                                )
                            )
            if not progressed:
                done.add(q)
        order = self._order(now, usage, ent, ranks, load) if explain else ()
        return Decisions(tuple(starts), tuple(preemptions), tuple(reservations), reports, order)

    def _candidates(self, q: str, depth: int, tried: set[str], now: float, load: float) -> list[Pend]:
        out: list[Pend] = []
        for key in self.queues[q]:
            if key[2] in tried:
                continue
            out.append(self.pending[key[2]])
            if len(out) >= depth:
                break
        if self.ctx.mode != "budgets" or len(out) < 2:
            return out
        maxfree = self.pool.max_free()

        def k(p: Pend) -> tuple[float, float, str]:
            s = self._score(p, now, load, maxfree)
            return (-s, p.eligible, p.spec.id)

        out.sort(key=k)
        return out

    def _score(self, p: Pend, now: float, load: float, maxfree: int) -> float:
        spec = p.spec
        return score(
            self.ctx,
            spec,
            declared=p.declared,
            now=now,
            eligible=p.eligible,
            remaining=spec.work - p.done_work,
            fits=spec.gpus <= maxfree,
            user_running_gpus=self.user_gpus.get((spec.account, spec.user), 0),
            load=load,
        ).total

    def _launch(
        self, p: Pend, pl: tuple[tuple[int, int], ...], now: float, why: str, qk: tuple[int, int, str]
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
            reason = f"{why}; {'within' if allocated else 'beyond'} the team's non-preemptible limit"
        else:
            allocated = mr > 0
            protected = math.inf
            reason = f"{why}; first come, first served"
        self._start(spec, now, pl, allocated, protected, p.done_work, p.declared, p.evicted_by, p.eligible)
        return Start(spec.id, tuple((self.pool.names[i], g) for i, g in pl), allocated, reason)

    def _evict(self, job_id: str, now: float, for_job: str | None, rule: str, reason: str) -> Preemption:
        r = self._stop(job_id)
        spec = r.spec
        ran = now - r.start
        pol = self.ctx.policy
        if spec.resumable and pol.requeue_resumable:
            ci = spec.checkpoint_interval
            kept = ran if ci is None or ci <= 0 else math.floor(ran / ci) * ci
            self.add_pending(spec, _eligible(r, spec), now, done_work=r.done_before + kept, declared=r.declared, evicted_by=for_job)
        elif pol.non_resumable == "cancel":
            kept = 0.0
        else:
            kept = 0.0
            self.add_pending(spec, _eligible(r, spec), now, done_work=0.0, declared=r.declared, evicted_by=for_job)
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

    def _reserve(self, spec: JobSpec, n: int, per: int, now: float) -> tuple[frozenset[int], float, str] | None:
        pool = self.pool
        free_at: list[tuple[float, int]] = []
        for i in range(len(pool.names)):
            if not pool.healthy[i] or pool.total[i] < per:
                continue
            if spec.gpu_type is not None and pool.gpu_type[i] != spec.gpu_type:
                continue
            if pool.free[i] >= per:
                free_at.append((now, i))
            else:
                free_at.append((max(self.running[j].est_end for j in pool.jobs[i]), i))
        if len(free_at) < n:
            return None
        free_at.sort()
        chosen = free_at[:n]
        return (frozenset(i for _, i in chosen), chosen[-1][0], spec.id)

    def _drain(self, now: float, out: list[Preemption]) -> tuple[NodeReport, ...]:
        reports: list[NodeReport] = []
        threshold = self.ctx.policy.human_drain_threshold_s
        for i in sorted(self.unhealthy_since):
            since = self.unhealthy_since[i]
            for jid in sorted(self.pool.jobs[i]):
                if jid in self.preemptible:
                    out.append(self._evict(jid, now, None, "drain", f"node {self.pool.names[i]} is unhealthy"))
            waiting = tuple(sorted(self.pool.jobs[i]))
            if not waiting:
                reports.append(NodeReport(self.pool.names[i], "ready-for-repair", (), False, "empty: no job left on it"))
                continue
            human = any(self.running[j].protected_until - since > threshold for j in waiting)
            reports.append(
                NodeReport(
                    self.pool.names[i],
                    "draining",
                    waiting,
                    human,
                    "waiting for minimum runtimes to end" + ("; a job is protected past the human-drain threshold" if human else ""),
                )
            )
        return tuple(reports)

    def _order(
        self, now: float, usage: Mapping[str, float], ent: Mapping[str, float], ranks: Iterable[object], load: float
    ) -> tuple[Ranked, ...]:
        """The full pending order with its metrics (for explain; not needed to decide)."""
        from allotment.core.fairshare import LeafRank

        rank_of = {r.leaf: r for r in ranks if isinstance(r, LeafRank)}
        maxfree = self.pool.max_free()
        rows = []
        for p in self.pending.values():
            q = p.queue
            r = rank_of.get(q)
            tier = 0 if q != GLOBAL_QUEUE and self.alloc_gpus.get(q, 0) < ent.get(q, 0.0) else (1 if q != GLOBAL_QUEUE else 0)
            s = self._score(p, now, load, maxfree) if self.ctx.mode == "budgets" else -p.key[0]
            rank = r.rank if r is not None else 0
            key = (tier, rank, -s, p.eligible, p.spec.id) if self.ctx.mode == "budgets" else (*p.key, 0, "")
            rows.append((key, p, tier, r, s))
        rows.sort(key=lambda x: x[0])
        out = []
        for pos, (_, p, tier, r, s) in enumerate(rows):
            fs = r.level_fair_share if r is not None else ()
            why = (
                f"account {p.spec.account} is {'below' if tier == 0 else 'at or above'} its entitlement; "
                f"fair-share rank {r.rank if r else '-'}; within-team score {s:.3f}"
                if self.ctx.mode == "budgets"
                else f"{self.ctx.mode}: priority {p.declared}, eligible at {p.eligible:.0f}s"
            )
            out.append(Ranked(p.spec.id, p.spec.account, pos, tier, fs, s, why))
        return tuple(out)


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
