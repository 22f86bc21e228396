"""The event-driven simulator: replays a ``Workload`` through the scheduling core.

Events are arrivals, completions, ends of minimum runtimes and node health changes; the clock
jumps straight from one event time to the next, every event at one time is applied first and one
scheduling pass then sees them all.  Queue entries (``sim.event_queue.Due``) come out in
(time, order, sequence) order, so equal times always come out in the same order; the run is deterministic.  Everything that happens is
emitted as an event (``sim/eventlog.py``); the metrics are computed from those events alone.
``sim_seconds`` (wall time, on ``SimResult``, not in the metrics) is the only output that may
differ between identical runs.

Wake-ups: a pass runs after any event, and at the instants the core names
(``Scheduler.wake_at``: ends of protections, epoch boundaries while work waits), so the run takes
the same decisions as one with a pass at any other instants too (tests/sim/test_walk_equivalence.py).
``reference=True`` runs the core's reference walk (``core.walk.REFERENCE``), for ``--no-skip``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.core.context import MODES, build_context
from allotment.core.contract import refusal
from allotment.core.decisions import Decisions
from allotment.core.epoch import epoch_of
from allotment.core.jobs import JobSpec
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend
from allotment.core.usage import UsageLedger, WindowView
from allotment.core.walk import FAST, REFERENCE, WalkPolicy
from allotment.errors import UsageError
from allotment.sim.chains import chains_of
from allotment.sim.event_queue import Due, pop, push
from allotment.sim.eventlog import EventLog
from allotment.sim.events import Event, RunHeader
from allotment.sim.job_kind import job_kind
from allotment.sim.known_dependencies import KnownDependencies
from allotment.sim.latency import NONE, LatencyProfile
from allotment.sim.metrics import Recorder
from allotment.sim.overrides import apply_overrides
from allotment.traces.job_stream import JobSource, job_source
from allotment.traces.scenarios.workload import Workload

# event kinds, in the order they apply at one time: health first, then completions free GPUs,
# then arrivals, then wake-ups (a protection ran out), then requeued jobs eligible again
HEALTH, DONE, ARRIVE, WAKE, BACK = 0, 1, 2, 3, 4
# a backend's launch is logged before anything else at its instant: a resumed job with no
# work left ends at its launch time, and its end must not come before its start
LAUNCH = -1


@dataclass(frozen=True, slots=True)
class SimResult:
    metrics: dict[str, Any]  # exactly metrics_from_events(header, events)
    cluster: str
    policy: str
    header: RunHeader | None = None
    events: tuple[Event, ...] | None = None  # only with simulate(keep_events=True)
    context: Any = None  # the core Context the run used (for fair-share samples of a run dir)
    sim_seconds: float = 0.0  # wall time: not a metric (it differs between identical runs)
    recorder: Any = None  # the run's metrics.Recorder: what sim.window measures a part of the run from


def simulate(
    config: CompiledConfig,
    workload: Workload | JobSource,
    *,
    cluster: str | None = None,
    days: float | None = None,
    seed: int = 0,
    policy: str = "budgets",
    overrides: Mapping[str, str] | None = None,
    reference: bool = False,
    latency: LatencyProfile = NONE,
    keep_events: bool = False,
    on_event: Callable[[Event], None] | None = None,
) -> SimResult:
    """Replay ``workload`` on ``cluster`` (default: the largest) under ``policy``.

    With ``days`` the run stops at that horizon; without it, it runs until every job is done.
    ``seed`` is recorded; the replay itself draws no randomness.  ``reference`` runs the plain
    reference walk (same results, slower).  ``latency`` adds a backend's unavoidable delays
    (``sim.latency``; the default adds none).

    ``workload`` may be a ``JobSource`` (``traces.job_stream``; ``allot simulate --trace`` passes
    a trace file read line by line): the run holds a job from its arrival to its end, not the
    whole workload.

    The events feed the metrics and are then dropped, unless asked for: ``keep_events`` returns
    them all in ``SimResult.events`` (for short runs and tests), ``on_event`` is called with
    each as it happens (``sim.event_file.EventFile`` writes them to their file), so memory does
    not grow with the log when nobody reads it.
    """
    wall = time.perf_counter()
    cluster = cluster or config.largest_cluster()
    check_run(config, cluster, policy)
    pol = apply_overrides(config.policy_for(cluster), overrides or {}, cluster, config.clusters[cluster].node_names)
    ctx = build_context(config, cluster, mode=policy, policy=pol)
    kept: list[Event] | None = [] if keep_events else None
    # built and run in bulk (config.bulk): neither makes reference cycles
    # (tests/sim/test_no_cycles.py), and building the run (the chains, who waits for whom, the
    # propagated priorities: dicts and lists a linked job) with the collector on rescanned the
    # whole workload at each full collection: about a third of _Sim()'s CPU at 30 and 90 days
    with bulk_allocation():
        sim = _Sim(config, ctx.cluster, workload, days, ctx, seed=seed, walk=REFERENCE if reference else FAST)
        sim.log.kept = kept
        sim.log.on_event = on_event
        sim.latency = latency
        sim.run()
    rec = sim.ended()
    # the run's state (the core's queues and memos, the maps of who waits for whom) goes before
    # the summary builds its lists of waits, so those reuse its memory: at 90 days of ai2 the
    # summary's lists took the peak 21 MiB above the run's (issue 27 item 4)
    del sim
    metrics = rec.summary()
    if latency != NONE:
        metrics["latency_profile"] = latency.name
    wall = round(time.perf_counter() - wall, 3)
    events = tuple(kept) if kept is not None else None
    return SimResult(metrics, cluster, policy, rec.header, events, ctx, wall, rec)


def check_run(config: CompiledConfig, cluster: str, policy: str) -> None:
    """Usage errors for an unknown cluster or policy, before the core sees them."""
    if cluster not in config.clusters:
        raise UsageError(f"unknown cluster {cluster!r}; known: {', '.join(sorted(config.clusters))}")
    if policy not in MODES:
        raise UsageError(f"unknown policy {policy!r}; choose one of {', '.join(MODES)}")


@mypyc_attr(allow_interpreted_subclasses=True)  # tests/sim/checked.py checks every step
class _Sim:
    def __init__(
        self,
        config: CompiledConfig,
        cluster: str,
        workload: Workload | JobSource,
        days: float | None,
        ctx: Any,
        *,
        seed: int = 0,
        walk: WalkPolicy = FAST,
    ) -> None:
        cl = config.clusters[cluster]
        self.ctx = ctx
        nodes = tuple(NodeState(n, g.gpus_per_node, True, g.gpu_type) for g in cl.node_groups for n in g.node_names)
        self.gpus_of = {n.name: n.gpus for n in nodes}
        self.sched = Scheduler(ctx, nodes, walk=walk)
        self.ledger = UsageLedger(ctx.policy.lookback_s)
        self.horizon = days * 86400.0 if days is not None else math.inf
        # where the jobs come from, and the next to arrive, read ahead (run() resumes from here;
        # sim/switch.py forks the source for a copy of the run)
        self.source = source = job_source(workload)
        self.upcoming: JobSpec | None = source.next_job()
        # who waits for whom among the jobs submitted and not gone, as decide() reads them from
        # its snapshot: the dependants the core scores with, and the declared priorities raised
        # by them (sim/known_dependencies.py)
        self.known_deps = KnownDependencies()
        caps = {leaf: float(c) for leaf in ctx.leaves if (c := self.sched.state.ceiling(leaf)) is not None}
        header = RunHeader(
            policy=ctx.mode,
            cluster=cluster,
            seed=seed,
            end=0.0,  # set when the run stops
            capacity_gpus=ctx.capacity_gpus,
            nodes=dict(self.gpus_of),
            entitlement_gpus=dict(ctx.entitlement_gpus),
            ceilings=caps,
            debug_threshold_s=float(ctx.policy.debug_threshold_s),
            debug_max_gpus=max(self.gpus_of.values(), default=0),
            teams=tuple(sorted(ctx.leaves)),
        )
        self.rec = Recorder(header)
        self.log = EventLog(self.rec)  # every metric comes from these events (sim/events.py)
        self.heap: list[Due] = []  # sim.event_queue
        self.seq = 0
        self.end = 0.0
        # running job -> (start, charge rate, placement as (node index, GPUs))
        self.starts: dict[str, tuple[float, float, tuple[tuple[int, int], ...]]] = {}
        ids = {j.id for j in source.linked}  # every job a dependency can name
        self.chains = chains_of(source.linked)  # written on each member's submit, for the makespan
        # who waits for whom, over every linked job (in ai2 half the jobs: 38 MiB of sets and
        # lists at 90 days, issue 27 item 4): per job, how many of its prerequisites have not
        # ended yet, and per prerequisite the jobs that name it, once each, emptied as jobs go
        self.waiting_on: dict[str, int] = {}
        dependents: dict[str, list[str]] = {}
        for j in source.linked:
            deps = _prerequisites(j, ids)
            if deps:
                self.waiting_on[j.id] = len(deps)
                for d in deps:
                    dependents.setdefault(d, []).append(j.id)
        self.dependents: dict[str, tuple[str, ...]] = {d: tuple(js) for d, js in dependents.items()}
        # the jobs arrived and not yet gone (ended, rejected or cancelled): a replay holds these,
        # not the workload (issue 32, item 5)
        self.by_id: dict[str, JobSpec] = {}
        self.rejected: set[str] = set()  # rejected jobs that others depend on
        self.held: set[str] = set()
        epoch = ctx.epoch
        for e in source.node_events:
            if e.node in self.gpus_of:
                self._push(e.time, HEALTH, (e.node, e.state == "healthy", "node event in the trace"))
        for m in cl.maintenance:
            begin, end = _secs(m.start, epoch), _secs(m.end, epoch)
            if end <= 0.0:
                continue  # over before t = 0: not part of this run (docs/metrics.md, "t = 0")
            for n in m.nodes:
                if n in self.gpus_of:
                    self._push(max(0.0, begin), HEALTH, (n, False, f"maintenance: {m.reason}"))
                    self._push(end, HEALTH, (n, True, ""))
        self.due: float | None = None  # the pass to run, decided but not run yet (likewise)
        self.wakes: set[float] = set()  # WAKE times already in the heap
        self.last_decisions: Decisions | None = None  # the last pass's, for _nothing_can_change
        self._views: dict[float, WindowView] = {}
        self.folded = -math.inf  # where usage_at last folded the ledger's history
        self.latency = NONE  # sim.latency: set by simulate() after construction
        # latency profile: job -> the start the backend has not launched yet
        self.unlaunched: dict[str, Any] = {}
        # as run: job -> the queue entry of a start the cluster's next tick decided again while
        # Slurm had not launched it; that pass takes it back first (``_take_back_unlaunched``)
        self.redecide: dict[str, Pend] = {}
        self.same_launch: float | None = None  # latency.same_launch(), read by run() (None: ask per start)

    def summary(self) -> dict[str, Any]:
        """The metrics of the run so far: the recorder's, over [0, end)."""
        return self.ended().summary()

    def ended(self) -> Recorder:
        """The recorder, its header ending where the run stands (what the metrics are over)."""
        self.rec.header = dataclasses.replace(self.rec.header, end=self.end)
        return self.rec

    def _push(self, t: float, kind: int, payload: Any) -> None:
        self.seq += 1
        push(self.heap, Due(t, kind, self.seq, payload))

    def run(self, until: float | None = None) -> None:
        """Apply events in time order; schedule at the next reconcile tick after a change.

        Passes happen at multiples of ``reconcile_interval_s`` (the real reconciler's period;
        0 means right at each event), so events inside one tick share one pass.

        ``until`` pauses the run before anything at or after that instant; ``run()`` again
        resumes it exactly (``sim/switch.py``: a config change merged into a running cluster)."""
        take = self.source.next_job
        # who waits for whom within a team, as the core knows the jobs (core.priority.INHERIT)
        self.sched.state.dependants = self.known_deps.dependants
        nxt = self.upcoming
        heap = self.heap
        # latency profile: passes only at multiples of its cycle (default: the reconcile tick)
        tick = float(self.latency.pass_interval(self.ctx.policy.reconcile_interval_s))
        self.same_launch = self.latency.same_launch()
        due = self.due
        stop = self.horizon if until is None else min(until, self.horizon)
        while True:
            t_job = nxt.submit if nxt is not None else math.inf
            t_ev = heap[0].t if heap else math.inf
            now = min(t_job, t_ev)
            if due is not None and due < now:
                if due >= stop:
                    break
                self._pass(due)
                self.end = due
                due = None
                if self.horizon == math.inf and nxt is None and self._nothing_can_change():
                    break
                continue
            if now == math.inf or now >= stop:
                break
            changed = False
            while heap and heap[0].t == now and heap[0].kind < ARRIVE:
                e = pop(heap)
                changed |= self._apply(e.kind, e.payload, now)
            while nxt is not None and nxt.submit == now:
                changed |= self._arrive(nxt, now)
                nxt = take()
            while heap and heap[0].t == now:
                e = pop(heap)
                changed |= self._apply(e.kind, e.payload, now)
            if changed and due is None:
                if tick <= 0:
                    due = now
                elif self.latency.off_grid:  # latency profile: the pass sits at the tick's read
                    due = self.latency.pass_at(now, tick)
                else:
                    due = math.ceil(now / tick) * tick
            self.end = now
        self.upcoming, self.due = nxt, due
        if stop == self.horizon:
            self.end = self.horizon if self.horizon < math.inf else self.end

    def _nothing_can_change(self) -> bool:
        """Could no later pass decide anything?  Asked only without a horizon, once every job
        has arrived: the run would otherwise wake forever for a job that can never start (its
        nodes left the cluster and none returns: issue 32).  True when nothing runs, only wakes
        are queued (no end, health change, requeue or launch to come) and the pass just run
        decided nothing: with every healthy GPU free and no job started, what still waits does
        not fit the healthy nodes, and waking again only slides the window and reorders queues.
        The jobs left waiting stay pending in the metrics."""
        d = self.last_decisions
        if self.sched.state.running or d is None or d.starts or d.preemptions:
            return False
        return all(e.kind == WAKE for e in self.heap)

    # -- events -----------------------------------------------------------------------------
    def _arrive(self, spec: JobSpec, now: float) -> bool:
        self.by_id[spec.id] = spec
        self.known_deps.arrive(self.latency.as_known(spec))  # the core may know its time limit only
        n, _ = self.sched.state.pool.shape(spec)
        fits = n > 0 and self.sched.state.could_ever_fit(spec)  # else rejected at submission, never queued
        # a rejected prerequisite never ends, so it is still among those waited for
        dep_rejected = spec.id in self.waiting_on and any(d in self.rejected for d in spec.depends_on)
        held = fits and not dep_rejected and spec.id in self.waiting_on
        mr = self.sched.state.min_runtime(spec)
        self.log.submit(now, spec, mr, held=held, kind=job_kind(
            spec.kind, mr, spec.gpus, debug_threshold_s=self.rec.header.debug_threshold_s,
            node_gpus=self.rec.header.debug_max_gpus, interactive=self.ctx.policy.interactive,
        ), chain=self.chains.get(spec.id))
        if not fits or dep_rejected:
            self._reject(spec.id, now, "can never fit" if not fits else "a job it depends on was rejected")
            return False
        refused = refusal(mr, self.ctx.policy)
        if refused is not None:
            self._reject(spec.id, now, refused)
            return False
        if held:
            self.held.add(spec.id)  # submitted, waiting for its dependencies
            return False
        self._enqueue(spec, now)
        return True

    def _enqueue(self, spec: JobSpec, now: float) -> None:
        # latency profile: the core may know only the job's time limit, not its true work
        # as of the last dependency pass; the next pass's gives it the one decide() would
        declared = self.known_deps.declared_of(spec)
        self.sched.state.add_pending(self.latency.as_known(spec), now, now, declared=declared)

    def _apply(self, kind: int, payload: Any, now: float) -> bool:
        if kind == DONE:
            jid, start = payload
            s = self.starts.get(jid)
            if s is None or s[0] != start:
                return False  # stale: the job was preempted since
            r = self.sched.state.finish(jid)
            self._stopped(r.spec, now, completed=True)
            return True
        if kind == HEALTH:
            node, healthy, why = payload
            i = self.sched.state.pool.index[node]
            if self.sched.state.pool.healthy[i] == healthy:
                return False
            self.sched.state.set_health(node, healthy, now)
            if healthy:
                self.log.resume(now, node)
            else:
                self.log.drain(now, node, why)
            return True
        if kind == BACK:  # latency profile: a requeued job's eligibility delay is over
            p = payload
            self.sched.state.add_pending(  # its declared priority as the dependency pass gives it now
                p.spec, p.eligible, p.queued_since, done_work=p.done_work,
                declared=self.known_deps.declared_of(p.spec), evicted_by=p.evicted_by,
            )
            return True
        if kind == LAUNCH:  # latency profile: the backend has started a job the core placed
            jid, decided, st, rate = payload
            s = self.starts.get(jid)
            if s is not None and s[0] == decided:
                self.unlaunched.pop(jid, None)
                self.log.start(now, self.by_id[jid], st, rate)
                self.sched.state.launched(jid, now)  # its minimum runtime and kept work count from here
            # as run (the gate's replay profile), the launch is a change the next read sees,
            # like the reconciler's tick, which reads every interval: moving the run's start
            # can change a later decision (seed 3: a backfill the cluster's core made at the
            # read after f028's launch).  The nominal profile keeps one pass per change.
            return bool(self.latency.reads)
        # WAKE: an instant the core named (Scheduler.wake_at); always worth a pass
        self.wakes.discard(now)
        return True

    def _stopped(self, spec: JobSpec, now: float, *, completed: bool) -> None:
        _, rate, _ = self.starts.pop(spec.id)
        if rate:
            self.ledger.stop(spec.account, now, rate)
        if completed:
            self.log.end(now, spec)
            self._release_dependents(spec.id, now)
            del self.by_id[spec.id]
            self.known_deps.leave(spec.id)

    def _reject(self, jid: str, now: float, reason: str) -> None:
        """Rejected at submission (it can never fit); a job that depends on it can never run
        either (Slurm: DependencyNeverSatisfied), so those already submitted go too."""
        self.log.reject(now, self.by_id.pop(jid), reason)
        self.known_deps.leave(jid)
        if jid in self.dependents:
            self.rejected.add(jid)
        for d in self.dependents.pop(jid, ()):
            if d in self.held:  # already submitted: goes now (later ones go on arrival)
                self.held.discard(d)
                self.waiting_on.pop(d, None)
                self._reject(d, now, f"depends on {jid}, which was rejected")

    def _release_dependents(self, jid: str, now: float) -> None:
        for d in self.dependents.pop(jid, ()):
            w = self.waiting_on.get(d)
            if w is None:
                continue
            if w > 1:
                self.waiting_on[d] = w - 1
                continue
            del self.waiting_on[d]
            if d in self.held:  # submitted already (else it queues when it arrives)
                self.held.discard(d)
                self.log.eligible(now, self.by_id[d])
                self._enqueue(self.by_id[d], now)

    # -- one pass ---------------------------------------------------------------------------
    def _pass(self, now: float) -> None:
        sched = self.sched
        state = sched.state  # what the pass changed, read back and changed further here
        if self.redecide:
            self._take_back_unlaunched(now)
        self._dependency_pass()
        d = sched.run_pass(now, self.usage_at(now))
        self.last_decisions = d
        pool = state.pool
        weights = self.ctx.billing_weight
        unstarted: set[str] = set()
        for p in d.preemptions:
            spec = self.by_id[p.job_id]
            requeued = p.job_id in state.pending or p.job_id in state.running
            unlaunched = self.unlaunched.pop(p.job_id, None)
            if unlaunched is None and requeued and self.latency.ended_first(p.job_id, now):
                # as run: the cluster's requeue of this run found it ended, so it completed
                # (and a restart the same pass gave it, off a draining node, does not happen)
                if p.job_id in state.running:
                    state.finish(p.job_id)
                    unstarted.add(p.job_id)
                else:
                    state.take_pending(p.job_id)
                self._stopped(spec, now, completed=True)
                continue
            decided = self.starts[p.job_id][0]
            self._stopped(spec, now, completed=False)
            if unlaunched is not None:  # a launch delay longer than the pass interval
                if p.job_id in state.pending:  # the backend never ran it: nothing stops, it
                    # keeps no work from this start and waits out no requeue delay
                    q = state.take_pending(p.job_id)
                    kept = (now - decided) - p.lost_work
                    state.add_pending(q.spec, q.eligible, q.queued_since, done_work=max(0.0, q.done_work - kept),
                                      declared=q.declared, evicted_by=q.evicted_by)
                if requeued:
                    continue
                self.log.start(now, spec, unlaunched, 0.0)  # cancelled: a run of no time
            self.log.preempt(now, spec, p, requeued=requeued)
            if not requeued:  # cancelled by policy
                self._release_dependents(p.job_id, now)
                del self.by_id[p.job_id]
                self.known_deps.leave(p.job_id)
            elif self.latency.requeue_delay_s > 0:
                # latency profile: a requeued job leaves the queue until it is eligible again
                # (Slurm: EligibleTime = requeue + cred_expire + 1 s), also when the pass that
                # requeued it started it again (off a draining node): Slurm would not run it
                if p.job_id in state.running:
                    r = state.finish(p.job_id)
                    state.add_pending(r.spec, r.eligible, now, done_work=r.done_before,
                                      declared=r.declared, evicted_by=r.evicted_by)
                    unstarted.add(p.job_id)
                self._push(now + self.latency.requeue_delay_s, BACK, state.take_pending(p.job_id))
        same = self.same_launch
        for st in d.starts:
            if st.job_id in unstarted:
                continue
            r = state.running[st.job_id]
            spec = r.spec
            rate = 0.0
            if st.allocated:
                rate = sum(g * weights.get(pool.gpu_type[i], 1.0) for i, g in r.placement)
                self.ledger.start(spec.account, now, rate)
            self.starts[spec.id] = (now, rate, r.placement)
            # latency profile: the backend starts it later (one delay for all: read once, ``same``)
            if same is not None:
                launch = same
            else:
                launch = self.latency.launch_after(spec.id, now)
                again = self.latency.redecided_at(spec.id, now)
                if again is not None:  # as run: the cluster decided it again there, and that stuck
                    self.redecide[spec.id] = sched.starting.queued_entry(spec.id)
                    if again not in self.wakes:
                        self.wakes.add(again)
                        self._push(again, WAKE, None)
            if launch > 0:
                self.unlaunched[spec.id] = st
                self._push(now + launch, LAUNCH, (spec.id, now, st, rate))
            else:
                self.log.start(now, spec, st, rate)
            work = self.by_id[spec.id].work  # the true work (the core may plan with a time limit)
            self._push(now + launch + max(0.0, work - r.done_before), DONE, (spec.id, now))
        for n in d.notices:
            self.log.notice(now, self.by_id[n.job_id], n)
        if d.reservations or self.log.reserved():  # else nothing to log: not worth the arguments
            self.log.reservations(now, [(self.by_id[res.job_id], res) for res in d.reservations],
                                  {st.job_id for st in d.starts}, state.pending.__contains__, self.by_id.__getitem__)
        for rep in d.nodes:
            self.log.node_report(now, rep)
        wake = sched.wake_at(now)
        if wake is not None and wake not in self.wakes:
            self.wakes.add(wake)
            self._push(wake, WAKE, None)

    def _dependency_pass(self) -> None:
        """What the jobs that came and went since the last pass change in who waits for whom,
        given to the core before it decides: its dependants map, and the declared priority of
        each queued or running job whose dependants raise it otherwise now."""
        state = self.sched.state
        known = self.known_deps
        for jid in known.refresh():
            state.dependants_changed(jid, known.declared_of(known.known[jid]))
        state.dependants = known.dependants  # the same map all run (after a switch, a new scheduler's)

    def _take_back_unlaunched(self, now: float) -> None:
        """As run: each start the backend had not launched by this read, and whose run the
        cluster's tick at this read placed anew (``LatencyProfile.redecided_at``), goes back to
        the queue as it was queued, its GPUs free, before the pass decides it again, maybe
        elsewhere.  Nothing ran, so nothing is logged or kept; the charge from the first
        decision stops here and the new start's begins."""
        state = self.sched.state
        for jid, q in self.redecide.items():
            if jid in self.unlaunched:  # else launched, or preempted unlaunched, since
                del self.unlaunched[jid]
                state.stop(jid)
                self._stopped(q.spec, now, completed=False)
                state.add_pending(q.spec, q.eligible, q.queued_since, done_work=q.done_work,
                                  declared=q.declared, evicted_by=q.evicted_by)
        self.redecide = {}

    def usage_at(self, now: float) -> WindowView:
        """The window usage a pass at ``now`` reads: at its epoch (core.epoch).  One view per
        epoch: usage up to a past instant never changes, so the core may reuse what it computed
        from the same view."""
        t = epoch_of(now, self.ctx.policy.fairshare_period_s)
        view = self._views.get(t)
        if view is None:
            view = WindowView(self.ledger, t)
            self._views = {t: view}
            # no later pass reads the window before its far end at this epoch, nor, after a
            # switch to another fair-share period (sim/switch.py; at most a lookback, else
            # the ledger refuses), before the next lookback: fold the rest away.  Once a
            # sixteenth of a lookback has passed since the last fold, not at every epoch: a
            # fold only drops changes no read reaches (the values stay), and asking every
            # curve at every epoch cost 244 M instructions on the Philly-shaped cut (8,000
            # epochs); the ledger then holds at most a sixteenth of a lookback more
            lookback = self.ledger.lookback_s
            cut = t - lookback - max(lookback, self.ctx.policy.fairshare_period_s)
            if cut >= self.folded + lookback / 16:
                self.ledger.forget_before(cut)
                self.folded = cut
        return view


def _prerequisites(j: JobSpec, ids: set[str]) -> tuple[str, ...]:
    """The jobs ``j`` waits for: those it names that the source holds, each once."""
    return tuple(dict.fromkeys(d for d in j.depends_on if d in ids and d != j.id))


def _secs(when: dt.datetime, epoch: dt.datetime) -> float:
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return (when - epoch).total_seconds()
