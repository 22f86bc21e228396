"""A simulator that checks the core's invariants after every event and every pass.

It integrates idle and unhealthy GPUs itself, from the node pool, so GPU-hour conservation is
checked against an independent measure rather than against the recorder's own numbers."""

from __future__ import annotations

from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.debug import is_debug
from allotment.core.debug_overdraft import YIELD_RULE
from allotment.core.jobs import JobSpec
from allotment.core.preemption.slicing import OWN_TEAM
from allotment.sim.runner import _Sim
from allotment.traces.scenarios.workload import Workload

# A job preempted this many times, or this many passes at one instant, is a run that would never
# end (a livelock: two jobs taking turns for ever, stop 48's hold_evicts cycle, evicted 426 times in
# 3 days): the run stops with a failure instead of hanging the suite.  Measured on 600 generated
# examples (stop 49): at most 6 preemptions of one job; the bounds leave a wide margin.
MAX_PREEMPTIONS_OF_ONE_JOB = 100
MAX_PASSES_AT_ONE_INSTANT = 1000


class Livelock(AssertionError):
    """The checked run stopped: it was going round in circles (see the bounds above)."""


class CheckedSim(_Sim):
    def __init__(
        self,
        config: CompiledConfig,
        workload: Workload,
        *,
        days: float | None = None,
        mode: str = "budgets",
    ) -> None:
        cluster = config.largest_cluster()
        ctx = build_context(config, cluster, mode=mode)
        super().__init__(config, cluster, workload, days, ctx)
        self.t_last = 0.0
        self.idle_gpu_s = 0.0
        self.unhealthy_gpu_s = 0.0
        self.violations: list[str] = []
        self.preempted: list[tuple[str, str]] = []
        self.passes = 0
        self.yielded: set[str] = (
            set()
        )  # every job the debug overdraft's yield took (core.debug_overdraft)
        # per pair of jobs, the directions of the team's own rules' evictions between them, in order
        self.own_turns: dict[frozenset[str], list[str]] = {}
        self.times_preempted: dict[str, int] = {}
        self.instant, self.passes_at_instant = -1.0, 0

    def _integrate(self, now: float) -> None:
        pool = self.sched.state.pool
        dt = now - self.t_last
        if dt > 0:
            idle = sum(f for f, h in zip(pool.free, pool.healthy, strict=True) if h)
            sick = sum(f for f, h in zip(pool.free, pool.healthy, strict=True) if not h)
            self.idle_gpu_s += idle * dt
            self.unhealthy_gpu_s += sick * dt
            self.t_last = now

    def _check_nodes(self, where: str) -> None:
        pool = self.sched.state.pool
        for i, jobs in enumerate(pool.jobs):
            used = sum(jobs.values())
            if used > pool.total[i] or pool.free[i] != pool.total[i] - used:
                self.violations.append(
                    f"{where}: node {pool.names[i]} holds {used} of {pool.total[i]} GPUs"
                )
        for jid, r in self.sched.state.running.items():
            if sum(g for _, g in r.placement) != r.spec.gpus:
                self.violations.append(f"{where}: {jid} placed on the wrong number of GPUs")
            if r.allocated and self.sched.state.min_runtime(r.spec) == 0:
                self.violations.append(f"{where}: unallocated job {jid} runs charged")

    def _apply(self, kind: int, payload: Any, now: float) -> bool:
        self._integrate(now)
        changed = super()._apply(kind, payload, now)
        self._check_nodes(f"event at {now}")
        return changed

    def _arrive(self, spec: JobSpec, now: float) -> bool:
        self._integrate(now)
        return super()._arrive(spec, now)

    def _pass(self, now: float) -> None:
        self._integrate(now)
        state = self.sched.state
        protected = {j: r.protected_until for j, r in state.running.items()}
        evicted_before = {j: r.evicted_by is not None for j, r in state.running.items()}
        capped_before = self._capped_gpus()
        super()._pass(now)
        self.passes += 1
        for p in self.last_decisions.preemptions if self.last_decisions is not None else ():
            self.preempted.append((p.job_id, p.rule))
            if protected.get(p.job_id, now) > now:
                self.violations.append(
                    f"pass at {now}: {p.job_id} preempted ({p.rule}) before its minimum runtime"
                )
            if p.rule == YIELD_RULE:
                beyond = self._may_be_beyond(capped_before, p.job_id, p.for_job)
                self._check_yield(f"pass at {now}", p.job_id, evicted_before, beyond)
            if p.rule in OWN_TEAM and p.for_job is not None:
                self._check_back_and_forth(f"pass at {now}", p.for_job, p.job_id)
        self._check_nodes(f"pass at {now}")
        self._check_caps(f"pass at {now}")
        self._check_progress(now)

    def _check_progress(self, now: float) -> None:
        """Stop a run that goes round in circles (``Livelock``) rather than let it run for ever."""
        self.passes_at_instant = self.passes_at_instant + 1 if now == self.instant else 1
        self.instant = now
        if self.passes_at_instant > MAX_PASSES_AT_ONE_INSTANT:
            raise Livelock(f"{self.passes_at_instant} passes at {now} without time moving on")
        for p in self.last_decisions.preemptions if self.last_decisions is not None else ():
            n = self.times_preempted[p.job_id] = self.times_preempted.get(p.job_id, 0) + 1
            if n > MAX_PREEMPTIONS_OF_ONE_JOB:
                recent = self.preempted[-6:]
                raise Livelock(
                    f"pass at {now}: {p.job_id} preempted {n} times (last preemptions: {recent})"
                )

    def _check_caps(self, where: str) -> None:
        """Every ``max_gpus`` holds: allocated GPUs under it at most the cap plus the debug
        overdraft, and those of jobs that can never be debug work (protected longer than the
        threshold, or larger than a node) at most the cap itself (``core.debug_overdraft``)."""
        ctx, sched = self.ctx, self.sched
        over, thr, node = (
            ctx.policy.debug_over_cap,
            ctx.policy.debug_threshold_s,
            sched.state.pool.max_gpus,
        )
        for name, t in ctx.tree.items():
            if t.max_gpus is None:
                continue
            runs = [
                r
                for r in sched.state.running.values()
                if r.allocated and name in ctx.paths.get(r.account, ())
            ]
            total = sum(r.spec.gpus for r in runs)
            never = sum(
                r.spec.gpus
                for r in runs
                if sched.state.min_runtime(r.spec) > thr or r.spec.gpus > node
            )
            if total > t.max_gpus + over or never > t.max_gpus:
                self.violations.append(
                    f"{where}: {name} runs {total} GPUs ({never} never debug) under max_gpus {t.max_gpus}"
                )

    def _capped_gpus(self) -> dict[str, int]:
        """Allocated GPUs running under each node of the tree that has a ``max_gpus``."""
        state, ctx = self.sched.state, self.ctx
        out = {name: 0 for name, t in ctx.tree.items() if t.max_gpus is not None}
        for r in state.running.values():
            if r.allocated:
                for name in ctx.paths.get(r.account, ()):
                    if name in out:
                        out[name] += r.spec.gpus
        return out

    def _may_be_beyond(self, before: dict[str, int], victim: str, for_job: str | None) -> bool:
        """Could the victim's team have run beyond a cap on its path when the pass's yield took
        it?  The pass's record keeps its starts and its preemptions apart, so the moment is not
        known: beyond before the pass, or once the pass's other allocated starts under that cap
        are added (a debug job the overdraft admitted earlier in the same pass takes its team
        beyond the cap, and the yield then makes room for capped work: ``for_job``, not counted)."""
        ctx = self.ctx
        started: dict[str, int] = {}
        d = self.last_decisions
        for st in d.starts if d is not None else ():
            if st.allocated and st.job_id != for_job:
                spec = self.by_id[st.job_id]
                for name in ctx.paths.get(spec.account, ()):
                    started[name] = started.get(name, 0) + spec.gpus
        account = self.by_id[victim].account
        for name in ctx.paths.get(account, ()):
            limit = ctx.tree[name].max_gpus
            if limit is not None and before.get(name, 0) + started.get(name, 0) > limit:
                return True
        return False

    def _check_yield(
        self, where: str, jid: str, evicted_before: dict[str, bool], beyond: bool
    ) -> None:
        """The debug overdraft's yield (``core.debug_overdraft``) takes only a debug job never
        evicted before, of a team beyond a cap, with ``debug_over_cap_admits: protection``; so
        it takes a job at most once."""
        policy = self.ctx.policy
        spec = self.by_id[jid]
        debug = is_debug(
            self.sched.state.min_runtime(spec),
            spec.gpus,
            policy.debug_threshold_s,
            self.sched.state.pool.max_gpus,
        )
        if (
            policy.debug_over_cap_admits != "protection"
            or evicted_before.get(jid, True)
            or jid in self.yielded
            or not beyond
            or not debug
        ):
            self.violations.append(f"{where}: {jid} taken by {YIELD_RULE} outside its terms")
        self.yielded.add(jid)

    def _check_back_and_forth(self, where: str, evictor: str, victim: str) -> None:
        """No pair of jobs evicts each other back and forth by the team's own rules
        (``within-team``, ``debug-slice``, the overdraft's yield): once each way at most."""
        turns = self.own_turns.setdefault(frozenset((evictor, victim)), [])
        if not turns or turns[-1] != evictor:
            turns.append(evictor)
        if len(turns) > 2:
            self.violations.append(
                f"{where}: {evictor} and {victim} evict each other back and forth ({turns})"
            )

    def run(self, until: float | None = None) -> None:
        super().run(until)
        self._integrate(self.end)
