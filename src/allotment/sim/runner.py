"""The event-driven simulator: replays a ``Workload`` through the scheduling core.

Events are arrivals, completions, ends of minimum runtimes and node health changes; the clock
jumps straight from one event time to the next, every event at one time is applied first and one
scheduling pass then sees them all.  Heap entries are ``(time, order, sequence, ...)`` so equal
times always come out in the same order; the run is deterministic.  ``sim_seconds`` (wall time)
is the only output that may differ between identical runs.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.priority import propagate
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.usage import UsageLedger, WindowView
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.metrics import Recorder
from allotment.sim.overrides import apply_overrides
from allotment.traces.scenarios.workload import Workload

# event kinds, in the order they apply at one time: health first, then completions free GPUs,
# then arrivals, then wake-ups (a protection ran out), then requeued jobs eligible again
HEALTH, DONE, ARRIVE, WAKE, BACK = 0, 1, 2, 3, 4


@dataclass(frozen=True, slots=True)
class SimResult:
    metrics: dict[str, Any]
    cluster: str
    policy: str


def simulate(
    config: CompiledConfig,
    workload: Workload,
    *,
    cluster: str | None = None,
    days: float | None = None,
    seed: int = 0,
    policy: str = "budgets",
    overrides: Mapping[str, str] | None = None,
    latency: LatencyProfile = NONE,
) -> SimResult:
    """Replay ``workload`` on ``cluster`` (default: the largest) under ``policy``.

    With ``days`` the run stops at that horizon; without it, it runs until every job is done.
    ``seed`` is recorded; the replay itself draws no randomness.  ``latency`` adds a backend's
    unavoidable delays (``sim.latency``; the default adds none).
    """
    wall = time.perf_counter()
    cluster = cluster or config.largest_cluster()
    pol = apply_overrides(config.policy_for(cluster) if cluster in config.clusters else config.policy, overrides or {})
    ctx = build_context(config, cluster, mode=policy, policy=pol)
    sim = _Sim(config, ctx.cluster, workload, days, ctx)
    sim.latency = latency
    sim.run()
    metrics = sim.rec.summary(sim.end)
    metrics["policy"] = policy
    metrics["cluster"] = cluster
    metrics["seed"] = seed
    metrics["days"] = round(sim.end / 86400.0, 4)
    metrics["capacity_gpus"] = ctx.capacity_gpus
    if latency != NONE:
        metrics["latency_profile"] = latency.name
    metrics["sim_seconds"] = round(time.perf_counter() - wall, 3)
    return SimResult(metrics, cluster, policy)


@mypyc_attr(allow_interpreted_subclasses=True)  # tests/sim/checked.py checks every step
class _Sim:
    def __init__(self, config: CompiledConfig, cluster: str, workload: Workload, days: float | None, ctx: Any) -> None:
        cl = config.clusters[cluster]
        self.ctx = ctx
        nodes = tuple(NodeState(n, g.gpus_per_node, True, g.gpu_type) for g in cl.node_groups for n in g.node_names)
        self.gpus_of = {n.name: n.gpus for n in nodes}
        self.sched = Scheduler(ctx, nodes)
        self.ledger = UsageLedger(ctx.policy.lookback_s)
        self.horizon = days * 86400.0 if days is not None else math.inf
        self.jobs = workload.jobs
        self.declared = propagate(self.jobs)
        caps = {leaf: float(c) for leaf in ctx.leaves if (c := self.sched.ceiling(leaf)) is not None}
        self.rec = Recorder(ctx.leaves, ctx.capacity_gpus, ctx.entitlement_gpus, caps)
        self.heap: list[tuple[float, int, int, str, Any]] = []
        self.seq = 0
        self.end = 0.0
        # running job -> (start, charge rate, placement as (node index, GPUs))
        self.starts: dict[str, tuple[float, float, tuple[tuple[int, int], ...]]] = {}
        ids = {j.id for j in self.jobs}
        self.waiting_on: dict[str, set[str]] = {}
        self.dependents: dict[str, list[str]] = {}
        for j in self.jobs:
            deps = {d for d in j.depends_on if d in ids and d != j.id}
            if deps:
                self.waiting_on[j.id] = deps
                for d in deps:
                    self.dependents.setdefault(d, []).append(j.id)
        self.by_id = {j.id: j for j in self.jobs}
        self.finished: set[str] = set()
        self.rejected: set[str] = set()
        self.held: set[str] = set()
        epoch = ctx.epoch
        for e in workload.node_events:
            if e.node in self.gpus_of:
                self._push(e.time, HEALTH, (e.node, e.state == "healthy"))
        for m in cl.maintenance:
            for n in m.nodes:
                if n in self.gpus_of:
                    self._push(_secs(m.start, epoch), HEALTH, (n, False))
                    self._push(_secs(m.end, epoch), HEALTH, (n, True))
        self.failures: dict[str, int] = {}  # node -> index in rec.drains of its open drain
        self.reported_human: set[int] = set()
        self.retry_pushed = -1.0
        self.latency = NONE  # sim.latency: set by simulate() after construction

    def _push(self, t: float, kind: int, payload: Any) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, kind, self.seq, "", payload))

    def run(self) -> None:
        """Apply events in time order; schedule at the next reconcile tick after a change.

        Passes happen at multiples of ``reconcile_interval_s`` (the real reconciler's period;
        0 means right at each event), so events inside one tick share one pass."""
        jobs = self.jobs
        nxt = 0
        heap = self.heap
        # latency profile: passes only at multiples of its cycle (default: the reconcile tick)
        tick = float(self.latency.pass_interval(self.ctx.policy.reconcile_interval_s))
        due: float | None = None
        while True:
            t_job = jobs[nxt].submit if nxt < len(jobs) else math.inf
            t_ev = heap[0][0] if heap else math.inf
            now = min(t_job, t_ev)
            if due is not None and due < now:
                if due >= self.horizon:
                    break
                self._pass(due)
                self.end = due
                due = None
                continue
            if now == math.inf or now >= self.horizon:
                break
            changed = False
            while heap and heap[0][0] == now and heap[0][1] < ARRIVE:
                _, kind, _, _, payload = heapq.heappop(heap)
                changed |= self._apply(kind, payload, now)
            while nxt < len(jobs) and jobs[nxt].submit == now:
                changed |= self._arrive(jobs[nxt], now)
                nxt += 1
            while heap and heap[0][0] == now:
                _, kind, _, _, payload = heapq.heappop(heap)
                changed |= self._apply(kind, payload, now)
            if changed and due is None:
                due = math.ceil(now / tick) * tick if tick > 0 else now
            self.end = now
        self.end = self.horizon if self.horizon < math.inf else self.end

    # -- events -----------------------------------------------------------------------------
    def _arrive(self, spec: JobSpec, now: float) -> bool:
        self.rec.submitted += 1
        n, _ = self.sched.pool.shape(spec)
        if (
            n == 0
            or not self.sched.could_ever_fit(spec)  # rejected at submission, never queued
            or any(d in self.rejected for d in self.waiting_on.get(spec.id, ()))
        ):
            self._reject(spec.id, now)
            return False
        if spec.id in self.waiting_on:
            self.held.add(spec.id)  # submitted, waiting for its dependencies
            return False
        self._enqueue(spec, now)
        return True

    def _enqueue(self, spec: JobSpec, now: float) -> None:
        self.rec.job_eligible(spec.id, spec.kind, spec.gpus, now, spec.account)
        # latency profile: the core may know only the job's time limit, not its true work
        self.sched.add_pending(self.latency.as_known(spec), now, now, declared=self.declared[spec.id])
        self.rec.demand_change(now, spec.account, spec.gpus, self._budgeted(spec))

    def _budgeted(self, spec: JobSpec) -> bool:
        return self.sched.min_runtime(spec) > 0

    def _apply(self, kind: int, payload: Any, now: float) -> bool:
        if kind == DONE:
            jid, start = payload
            s = self.starts.get(jid)
            if s is None or s[0] != start:
                return False  # stale: the job was preempted since
            r = self.sched.finish(jid)
            self._stopped(r.spec, now, completed=True)
            return True
        if kind == HEALTH:
            node, healthy = payload
            i = self.sched.pool.index[node]
            if self.sched.pool.healthy[i] == healthy:
                return False
            self.sched.set_health(node, healthy, now)
            # out of service: the GPUs of an unhealthy node that hold no job (busy ones still
            # deliver until drained)
            free = self.sched.pool.free[i]
            self.rec.health_change(now, free if healthy else -free)
            if healthy:
                k = self.failures.pop(node, None)
                if k is not None:
                    began, emptied, _ = self.rec.drains[k]
                    self.rec.drains[k] = (began, emptied, now)
            else:
                self.failures[node] = len(self.rec.drains)
                self.rec.drains.append((now, None, None))
            return True
        if kind == BACK:  # latency profile: a requeued job's eligibility delay is over
            p = payload
            self.sched.add_pending(
                p.spec, p.eligible, p.queued_since, done_work=p.done_work,
                declared=p.declared, evicted_by=p.evicted_by,
            )
            return True
        # WAKE: a put-off victim search (payload None) always gets its pass; the end of a job's
        # protection only if something would act on it at once (see Scheduler.expiry_matters)
        return payload is None or self.sched.expiry_matters(payload, now)

    def _stopped(self, spec: JobSpec, now: float, *, completed: bool) -> None:
        _, rate, placement = self.starts.pop(spec.id)
        pool = self.sched.pool
        for i, g in placement:
            if not pool.healthy[i]:
                self.rec.health_change(now, -g)  # freed on an unhealthy node: out of service
        if rate:
            self.ledger.stop(spec.account, now, rate)
        self.rec.run_change(now, spec.account, -spec.gpus, rate > 0, self._budgeted(spec))
        if completed:
            self.rec.demand_change(now, spec.account, -spec.gpus, self._budgeted(spec))
            self.rec.completed += 1
            self._release_dependents(spec.id, now)

    def _reject(self, jid: str, now: float) -> None:
        """Rejected at submission (it can never fit); a job that depends on it can never run
        either (Slurm: DependencyNeverSatisfied), so those already submitted go too."""
        self.rec.rejected += 1
        self.rejected.add(jid)
        for d in self.dependents.get(jid, ()):
            if d in self.held:  # already submitted: goes now (later ones go on arrival)
                self.held.discard(d)
                self.waiting_on.pop(d, None)
                self._reject(d, now)

    def _release_dependents(self, jid: str, now: float) -> None:
        self.finished.add(jid)
        for d in self.dependents.get(jid, ()):
            w = self.waiting_on.get(d)
            if w is None:
                continue
            w.discard(jid)
            if not w:
                del self.waiting_on[d]
                if d in self.held:  # submitted already (else it queues when it arrives)
                    self.held.discard(d)
                    self._enqueue(self.by_id[d], now)

    # -- one pass ---------------------------------------------------------------------------
    def _pass(self, now: float) -> None:
        sched = self.sched
        usage = WindowView(self.ledger, now)
        d = sched.run_pass(now, usage)
        self.last_decisions = d
        if d.retry_at is not None and d.retry_at > now and d.retry_at != self.retry_pushed:
            self.retry_pushed = d.retry_at
            self._push(d.retry_at, WAKE, None)
        pool = sched.pool
        weights = self.ctx.billing_weight
        for p in d.preemptions:
            spec = self.by_id[p.job_id]
            self._stopped(spec, now, completed=False)
            self.rec.preempted(p.rule, p.lost_work, spec.gpus)
            if p.job_id not in sched.pending and p.job_id not in sched.running:  # cancelled by policy
                self.rec.cancelled += 1
                self.rec.demand_change(now, spec.account, -spec.gpus, self._budgeted(spec))
                self._release_dependents(p.job_id, now)
            elif p.job_id in sched.pending and self.latency.requeue_delay_s > 0:
                # latency profile: a requeued job leaves the queue until it is eligible again
                # (Slurm: EligibleTime = requeue + cred_expire + 1 s)
                self._push(now + self.latency.requeue_delay_s, BACK, sched._take_pending(p.job_id))
        for st in d.starts:
            r = sched.running[st.job_id]
            spec = r.spec
            rate = 0.0
            if st.allocated:
                rate = sum(g * weights.get(pool.gpu_type[i], 1.0) for i, g in r.placement)
                self.ledger.start(spec.account, now, rate)
            self.starts[spec.id] = (now, rate, r.placement)
            launch = self.latency.launch_delay_s  # latency profile: the backend starts it later
            self.rec.first_start(spec.id, now + launch)
            self.rec.run_change(now, spec.account, spec.gpus, st.allocated, self._budgeted(spec))
            work = self.by_id[spec.id].work  # the true work (the core may plan with a limit)
            self._push(now + launch + max(0.0, work - r.done_before), DONE, (spec.id, now))
            if now < r.protected_until < math.inf and self.ctx.mode == "budgets":
                self._push(r.protected_until, WAKE, spec.id)
        for rep in d.nodes:
            k = self.failures.get(rep.node)
            if k is None:
                continue
            if rep.state == "ready-for-repair":
                s, e, h = self.rec.drains[k]
                if e is None:
                    self.rec.drains[k] = (s, now, h)
            elif rep.needs_human and k not in self.reported_human:
                self.reported_human.add(k)
                self.rec.human_drains += 1


def _secs(when: dt.datetime, epoch: dt.datetime) -> float:
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return (when - epoch).total_seconds()
