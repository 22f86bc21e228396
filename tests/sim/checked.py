"""A simulator that checks the core's invariants after every event and every pass.

It integrates idle and unhealthy GPUs itself, from the node pool, so GPU-hour conservation is
checked against an independent measure rather than against the recorder's own numbers."""

from __future__ import annotations

from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.sim.runner import _Sim
from allotment.traces.scenarios.workload import Workload


class CheckedSim(_Sim):
    def __init__(
        self, config: CompiledConfig, workload: Workload, *, days: float | None = None, mode: str = "budgets"
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
                self.violations.append(f"{where}: node {pool.names[i]} holds {used} of {pool.total[i]} GPUs")
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
        protected = {j: r.protected_until for j, r in self.sched.state.running.items()}
        super()._pass(now)
        self.passes += 1
        for p in self.last_decisions.preemptions:
            self.preempted.append((p.job_id, p.rule))
            if protected.get(p.job_id, now) > now:
                self.violations.append(f"pass at {now}: {p.job_id} preempted ({p.rule}) before its minimum runtime")
        self._check_nodes(f"pass at {now}")
        self._check_caps(f"pass at {now}")

    def _check_caps(self, where: str) -> None:
        """Every ``max_gpus`` holds: allocated GPUs under it at most the cap plus the debug
        overdraft, and those of jobs that can never be debug work (protected longer than the
        threshold, or larger than a node) at most the cap itself (``core.debug_overdraft``)."""
        ctx, sched = self.ctx, self.sched
        over, thr, node = ctx.policy.debug_over_cap, ctx.policy.debug_threshold_s, sched.state.pool.max_gpus
        for name, t in ctx.tree.items():
            if t.max_gpus is None:
                continue
            runs = [r for r in sched.state.running.values() if r.allocated and name in ctx.paths.get(r.account, ())]
            total = sum(r.spec.gpus for r in runs)
            never = sum(r.spec.gpus for r in runs if sched.state.min_runtime(r.spec) > thr or r.spec.gpus > node)
            if total > t.max_gpus + over or never > t.max_gpus:
                self.violations.append(f"{where}: {name} runs {total} GPUs ({never} never debug) under max_gpus {t.max_gpus}")

    def run(self) -> None:
        super().run()
        self._integrate(self.end)
