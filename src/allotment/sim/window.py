"""The metrics of the measured part of a run: ``[start, end)`` of a run that began with a warm-up.

A run starts with an empty usage window and an empty cluster, so its first days are a start-up
transient (every team's window usage is zero, the initial backlog floods in) that no real cluster
is in when a budget change merges.  ``allot plan`` therefore simulates a warm-up of at least one
lookback window and measures only what follows (docs/plan.md, "Why the projections did not follow
the change").  The quantities are the same hour-by-hour integrals as the run's summary
(``summary.team_hours`` is the one definition of owed), summed over the measured hours only.

Every quantity is in GPU-hours of the simulated cluster's own GPUs (not reference GPU-hours):
``demand`` (budgeted work running or pending), ``owed`` (the allocation capped hour by hour at
demand), ``charged`` (allocated, charged GPUs of the team's work running: what the team's budget
delivered), ``ran`` (budgeted work running, charged or not); and for the cluster, GPUs in service,
charged and running unallocated work; and the p50/p90 first-start wait of each job kind
(``summary.waits``, the lists behind ``metrics.json``'s ``wait``, over the measured part only).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from allotment.sim.job_kind import JOB_KINDS
from allotment.sim.signals import HOUR, HourlySignal
from allotment.sim.summary import percentile, percentiles, team_hours, waits

if TYPE_CHECKING:
    from allotment.sim.metrics import Recorder


def measured(rec: Recorder, start: float) -> dict[str, Any]:
    """The metrics of ``[start, end)`` of the run ``rec`` recorded (``start`` a whole hour)."""
    if start < 0 or start % HOUR:
        raise ValueError(f"the measured part must start on a whole hour, got t={start}")
    hdr = rec.header
    end = hdr.end
    first = int(start // HOUR)
    last = max(first, math.ceil(end / HOUR))
    span = max(0.0, end - start)
    signals = [rec.healthy, rec.charged, rec.free_work, *rec.team_demand.values(),
               *rec.team_charged.values(), *rec.team_run.values()]
    for s in signals:
        s.advance(end)

    def total(sig: HourlySignal) -> float:
        return sum(sig.hour(h) for h in range(first, last)) / HOUR

    kind_first, _, team_first, _ = waits(rec, end, start)
    teams: dict[str, dict[str, float]] = {}
    for t in rec.teams:
        owed = sum(x.owed for x in team_hours(rec, t)[first:last]) / HOUR
        teams[t] = {
            "demand_gpu_hours": _r(total(rec.team_demand[t])),
            "owed_gpu_hours": _r(owed),
            "charged_gpu_hours": _r(total(rec.team_charged[t])),
            "ran_gpu_hours": _r(total(rec.team_run[t])),
            "wait_p90_s": _r(percentile(team_first[t], 90)),
        }
    in_service = total(rec.healthy)
    charged = total(rec.charged)
    free = total(rec.free_work)
    return {
        "warmup_days": round(start / 86400.0, 4),
        "days": round(span / 86400.0, 4),
        "capacity_gpus": hdr.capacity_gpus,
        "in_service_gpu_hours": _r(in_service),
        "charged_gpu_hours": _r(charged),
        "unallocated_gpu_hours": _r(free),
        "occupancy": _r((charged + free) / in_service) if in_service else 0.0,
        "teams": teams,
        # first-start waits per job kind (sim/job_kind.py) of the jobs eligible after the warm-up
        "wait": {k: percentiles(kind_first[k]) for k in JOB_KINDS},
    }


def _r(x: float) -> float:
    return round(float(x), 4)
