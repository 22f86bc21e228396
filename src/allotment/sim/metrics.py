"""The metrics of one simulated run, with the Ai2 post's definitions (docs/metrics.md).

Everything is measured over [0, end), end = the horizon (``--days``) or, without one, when the
last job finished.  GPU quantities are integrated exactly between events, then summed by hour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from allotment.sim.signals import HOUR, HourlySignal

LARGE_GPUS = 64


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (deterministic, no interpolation); 0 for no values."""
    if not values:
        return 0.0
    s = sorted(values)
    k = max(0, math.ceil(q / 100.0 * len(s)) - 1)
    return s[k]


class Recorder:
    """Collects what the runner reports as it goes; ``summary()`` turns it into the metrics."""

    def __init__(
        self,
        teams: Iterable[str],
        capacity: int,
        entitlement: Mapping[str, float],
        caps: Mapping[str, float] | None = None,
    ) -> None:
        self.end = 0.0
        self.capacity = capacity
        self.entitlement = dict(entitlement)
        # the tightest max_gpus on each team's path: its own managers' ceiling, so the team is
        # never owed more GPUs than it may run (docs/metrics.md)
        self.caps: dict[str, float] = dict(caps or {})
        self.teams = sorted(teams)
        self.healthy = HourlySignal(float(capacity))
        self.charged = HourlySignal()  # allocated (charged) GPUs running
        self.free_work = HourlySignal()  # unallocated GPUs running
        self.demand = HourlySignal()  # GPUs of every running + pending job
        self.team_run = {t: HourlySignal() for t in self.teams}  # budgeted work running
        self.team_demand = {t: HourlySignal() for t in self.teams}  # budgeted work running+pending
        self.waits: dict[str, float] = {}
        self.kinds: dict[str, tuple[str, int, float, str]] = {}  # id -> (kind, gpus, eligible, account)
        self.submitted = 0
        self.completed = 0
        self.cancelled = 0
        self.rejected = 0
        self.preemptions = 0
        self.preemptions_by_rule: dict[str, int] = {}
        self.lost_gpu_seconds = 0.0
        self.drains: list[tuple[float, float | None, float | None]] = []  # (start, empty_at, healthy_at)
        self.human_drains = 0

    # -- called by the runner ---------------------------------------------------------------
    def job_eligible(self, job_id: str, kind: str, gpus: int, t: float, account: str = "") -> None:
        self.kinds[job_id] = (kind, gpus, t, account)

    def first_start(self, job_id: str, t: float) -> None:
        if job_id not in self.waits:
            self.waits[job_id] = t - self.kinds[job_id][2]

    def run_change(self, t: float, team: str, gpus: int, charged: bool, budgeted: bool) -> None:
        (self.charged if charged else self.free_work).add(t, gpus)
        if budgeted and team in self.team_run:
            self.team_run[team].add(t, gpus)

    def demand_change(self, t: float, team: str, gpus: int, budgeted: bool) -> None:
        self.demand.add(t, gpus)
        if budgeted and team in self.team_demand:
            self.team_demand[team].add(t, gpus)

    def health_change(self, t: float, gpus: int) -> None:
        self.healthy.add(t, gpus)

    def preempted(self, rule: str, lost_seconds: float, gpus: int) -> None:
        self.preemptions += 1
        self.preemptions_by_rule[rule] = self.preemptions_by_rule.get(rule, 0) + 1
        self.lost_gpu_seconds += lost_seconds * gpus

    # -- the summary --------------------------------------------------------------------------
    def summary(self, end: float) -> dict[str, Any]:
        self.end = end
        n_hours = max(1, math.ceil(end / HOUR))
        sigs = [self.healthy, self.charged, self.free_work, self.demand]
        sigs += list(self.team_run.values()) + list(self.team_demand.values())
        for s in sigs:
            s.advance(end)
        healthy = sum(self.healthy.hours[:n_hours])
        charged = sum(self.charged.hours[:n_hours])
        free = sum(self.free_work.hours[:n_hours])
        teams: dict[str, dict[str, Any]] = {}
        owed_total = delivered_total = capped_total = 0.0
        cap_hours = [self.capacity * min(HOUR, max(0.0, end - h * HOUR)) for h in range(n_hours)]
        for t in self.teams:
            owed = delivered = 0.0
            ent = self.entitlement.get(t, 0.0)
            ceiling = self.caps.get(t, math.inf)
            for h in range(n_hours):
                if cap_hours[h] <= 0:
                    continue
                healthy_frac = self.healthy.hour(h) / cap_hours[h]
                secs = cap_hours[h] / self.capacity
                owed += min(
                    min(ent * healthy_frac, ceiling) * secs, self.team_demand[t].hour(h)
                )
                delivered += self.team_run[t].hour(h)
            owed_h, delivered_h = owed / HOUR, delivered / HOUR
            teams[t] = {
                "owed": _r(owed_h),
                "delivered": _r(delivered_h),
                "ratio": _r(delivered_h / owed_h) if owed_h > 0 else 1.0,
            }
            owed_total += owed_h
            delivered_total += delivered_h
            capped_total += min(owed_h, delivered_h)
        waits_all, waits_debug, waits_large = [], [], []
        team_waits: dict[str, list[float]] = {t: [] for t in self.teams}
        for jid, (kind, gpus, elig, account) in self.kinds.items():
            if elig >= end:
                continue
            w = self.waits.get(jid, end - elig)  # never started: censored at the end
            waits_all.append(w)
            if account in team_waits:
                team_waits[account].append(w)
            if kind == "debug":
                waits_debug.append(w)
            if gpus >= LARGE_GPUS:
                waits_large.append(w)
        for t, ws in team_waits.items():
            teams[t]["wait"] = _pcts(ws)
        drain_secs = [((e if e is not None else (h if h is not None else end)) - s) for s, e, h in self.drains]
        return {
            "occupancy": _r((charged + free) / healthy) if healthy else 0.0,
            "allocated_fraction": _r(charged / healthy) if healthy else 0.0,
            "unallocated_fraction": _r(free / healthy) if healthy else 0.0,
            "demand_ratio": _r(sum(self.demand.hours[:n_hours]) / (self.capacity * end)) if end else 0.0,
            "owed_gpu_hours": _r(owed_total),
            "delivered_gpu_hours": _r(delivered_total),
            "delivered_over_owed": _r(capped_total / owed_total) if owed_total else 1.0,
            "teams": teams,
            "teams_at_or_above_95": sum(1 for v in teams.values() if v["ratio"] >= 0.95),
            "teams_min_ratio": min((v["ratio"] for v in teams.values()), default=1.0),
            "wait": {
                "all": _pcts(waits_all),
                "debug": _pcts(waits_debug),
                "large": _pcts(waits_large),
            },
            "preemptions": self.preemptions,
            "preemptions_by_rule": dict(sorted(self.preemptions_by_rule.items())),
            "lost_gpu_hours": _r(self.lost_gpu_seconds / HOUR),
            "drain_seconds": {
                "p50": _r(percentile(drain_secs, 50)),
                "p90": _r(percentile(drain_secs, 90)),
                "max": _r(max(drain_secs, default=0.0)),
            },
            "drains": len(self.drains),
            "human_drains": self.human_drains,
            "jobs": {
                "submitted": self.submitted,
                "completed": self.completed,
                "cancelled": self.cancelled,
                "rejected": self.rejected,
            },
        }


def _pcts(values: list[float]) -> dict[str, float]:
    return {"p50": _r(percentile(values, 50)), "p90": _r(percentile(values, 90)), "n": len(values)}


def _r(x: float) -> float:
    return round(float(x), 4)
