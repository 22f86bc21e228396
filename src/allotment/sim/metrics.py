"""The metrics of one simulated run, as Ai2 defines them (docs/metrics.md), from the event log.

``Recorder.consume`` takes the run's events one by one (the simulator feeds it as it emits them;
``events.metrics_from_events`` replays a saved log), so every metric is defined here once and a
log reproduces ``allot simulate --json`` exactly.  Everything is measured over [0, end), end =
the horizon (``--days``) or, without one, when the run stopped.  GPU quantities are integrated
exactly between events, then summed by hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allotment.core.debug import is_debug as core_is_debug
from allotment.sim.events import Event, RunHeader
from allotment.sim.signals import HourlySignal
from allotment.sim.summary import LARGE_GPUS, percentile, summarize

__all__ = ["LARGE_GPUS", "Recorder", "is_debug", "percentile"]


def is_debug(min_runtime: float, gpus: int, header: RunHeader) -> bool:
    """A debug job, by the policy: a minimum runtime above 0 and at most ``debug_threshold``,
    and no more GPUs than one node holds (not the trace's ``kind`` label)."""
    return core_is_debug(min_runtime, gpus, header.debug_threshold_s, header.debug_max_gpus)


@dataclass(slots=True)
class _Job:
    account: str
    gpus: int
    budgeted: bool  # minimum runtime > 0: counts against its team's budget
    debug: bool
    eligible: float | None = None
    first_start: float | None = None
    pending_since: float | None = None  # in the queue since (None: running, held or gone)
    pending_total: float = 0.0
    placement: tuple[tuple[str, int], ...] = ()
    allocated: bool = False


class Recorder:
    """Integrates the event stream into hourly signals and per-job waits."""

    def __init__(self, header: RunHeader) -> None:
        self.header = header
        self.teams = sorted(header.teams or header.entitlement_gpus)
        self.node_cap = dict(header.nodes)
        self.node_used = dict.fromkeys(header.nodes, 0)
        self.unhealthy: set[str] = set()
        self.healthy = HourlySignal(float(header.capacity_gpus))  # in-service GPUs
        self.charged = HourlySignal()  # allocated (charged) GPUs running
        self.free_work = HourlySignal()  # unallocated GPUs running
        self.demand = HourlySignal()  # GPUs of every running + pending job
        self.team_run = {t: HourlySignal() for t in self.teams}  # budgeted work running
        self.team_demand = {t: HourlySignal() for t in self.teams}  # budgeted work running+pending
        self.jobs: dict[str, _Job] = {}
        self.counts = {"submitted": 0, "completed": 0, "cancelled": 0, "rejected": 0}
        self.preemptions_by_rule: dict[str, int] = {}
        self.lost_gpu_hours = 0.0
        self.drains: list[list[float | None]] = []  # [unhealthy at, emptied at, healthy at]
        self.open_drain: dict[str, int] = {}
        self.human_drains = 0

    # -- events -------------------------------------------------------------------------------
    def consume(self, e: Event) -> None:
        getattr(self, "_on_" + e.event.replace("-", "_"))(e)

    def _on_submit(self, e: Event) -> None:
        self.counts["submitted"] += 1
        assert e.job is not None and e.account is not None and e.gpus is not None
        mr = e.min_runtime or 0.0
        self.jobs[e.job] = _Job(e.account, e.gpus, mr > 0, is_debug(mr, e.gpus, self.header))
        if not e.held:
            self._on_eligible(e)

    def _on_eligible(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        j.eligible = j.pending_since = e.t
        self._demand(e.t, j, j.gpus)

    def _on_reject(self, e: Event) -> None:
        self.counts["rejected"] += 1

    def _on_start(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        if j.pending_since is not None:
            j.pending_total += e.t - j.pending_since
            j.pending_since = None
        if j.first_start is None:
            j.first_start = e.t
        j.placement = tuple(zip(e.nodes or (), e.node_gpus or (), strict=True))
        j.allocated = bool(e.allocated)
        for n, g in j.placement:
            self.node_used[n] += g
        self._run(e.t, j, j.gpus)

    def _stop(self, t: float, j: _Job) -> None:
        for n, g in j.placement:
            self.node_used[n] -= g
            if n in self.unhealthy:
                self.healthy.add(t, -g)  # freed on an unhealthy node: out of service
        self._run(t, j, -j.gpus)
        j.placement = ()

    def _on_preempt(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        self._stop(e.t, j)
        rule = e.rule or ""
        self.preemptions_by_rule[rule] = self.preemptions_by_rule.get(rule, 0) + 1
        self.lost_gpu_hours += e.lost_gpu_hours or 0.0
        if e.requeued:
            j.pending_since = e.t
        else:
            self.counts["cancelled"] += 1
            self._demand(e.t, j, -j.gpus)

    def _on_end(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        self._stop(e.t, j)
        self._demand(e.t, j, -j.gpus)
        self.counts["completed"] += 1

    def _on_reserve(self, e: Event) -> None:
        pass  # advisory: no metric counts it

    def _on_drain(self, e: Event) -> None:
        node = e.node or ""
        if e.state == "unhealthy":
            self.unhealthy.add(node)
            self.healthy.add(e.t, -(self.node_cap[node] - self.node_used[node]))
            self.open_drain[node] = len(self.drains)
            self.drains.append([e.t, None, None])
        elif e.state == "ready-for-repair":
            d = self.drains[self.open_drain[node]]
            if d[1] is None:
                d[1] = e.t
        elif e.state == "needs-human":
            self.human_drains += 1

    def _on_resume(self, e: Event) -> None:
        node = e.node or ""
        self.unhealthy.discard(node)
        self.healthy.add(e.t, self.node_cap[node] - self.node_used[node])
        k = self.open_drain.pop(node, None)
        if k is not None:
            self.drains[k][2] = e.t

    def _run(self, t: float, j: _Job, gpus: int) -> None:
        (self.charged if j.allocated else self.free_work).add(t, gpus)
        if j.budgeted and j.account in self.team_run:
            self.team_run[j.account].add(t, gpus)

    def _demand(self, t: float, j: _Job, gpus: int) -> None:
        self.demand.add(t, gpus)
        if j.budgeted and j.account in self.team_demand:
            self.team_demand[j.account].add(t, gpus)

    # -- the summary --------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        return summarize(self)
