"""The simulator's run of a trace, in the replay's record format, for the side-by-side comparison.

The simulation is ``sim.runner.simulate`` itself (the same passes, the same latency profile the
replay is compared under); its event log (``sim.events``) is translated record by record into the
replay's ``Event`` (which adds the trace's job ``kind``, by which the comparison groups waits).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.jobs import JobSpec
from allotment.reconcile.replay.events import Event
from allotment.sim.latency import LatencyProfile
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload


def simulated_events(
    config: CompiledConfig,
    cluster: str,
    workload: Workload,
    latency: LatencyProfile,
    *,
    epoch_phase_s: float = 0.0,
) -> list[Event]:
    """``epoch_phase_s``: the replay's time 0 lay that long after a fair-share epoch boundary
    on the cluster (``drive.epoch_phase``).  The simulator's epochs sit at multiples of the
    period in its own time, so the workload runs that much later and the log is moved back:
    both cores then freeze usage and ages at the same trace times.  It must be a multiple of
    the pass interval (the replay's origin is), so the passes stay where the ticks are."""
    shifted = Workload.of(
        [_later(j, epoch_phase_s) for j in workload.jobs],
        [replace(e, time=e.time + epoch_phase_s) for e in workload.node_events],
    )
    if latency.reads:  # the replay's reads, run starts and ends move with its workload
        latency = latency.as_run(
            tuple(round(r + epoch_phase_s, 3) for r in latency.reads),
            tuple(replace(s, at=round(s.at + epoch_phase_s, 3),
                          decided=None if s.decided is None else round(s.decided + epoch_phase_s, 3),
                          placed=None if s.placed is None else round(s.placed + epoch_phase_s, 3))
                  for s in latency.launches),
            tuple(replace(e, at=round(e.at + epoch_phase_s, 3)) for e in latency.ended),
        )
    result = simulate(config, shifted, cluster=cluster, latency=latency, keep_events=True)
    back = [e.replace(t=round(e.t - epoch_phase_s, 3)) for e in result.events or ()]
    return _events(back, workload)


def _events(events: list[Any], workload: Workload) -> list[Event]:
    kind = {j.id: j.kind for j in workload.jobs}
    allocated: dict[str, bool] = {}
    out: list[Event] = []
    for e in events:
        job = e.job or ""
        if e.event == "submit":
            allocated[job] = (e.min_runtime or 0.0) > 0
            out.append(Event(e.t, "submit", job, e.account, e.gpus, None, allocated[job], kind=kind.get(job)))
        elif e.event == "start":
            out.append(
                Event(e.t, "start", job, e.account, e.gpus, len(e.nodes or ()), e.allocated,
                      rule="start", reason=e.reason, kind=kind.get(job))
            )
        elif e.event == "preempt":
            out.append(
                Event(e.t, "preempt", job, e.account, e.gpus, allocated=allocated.get(job), by=e.by,
                      rule=e.rule, reason=e.reason, lost_gpu_hours=e.lost_gpu_hours, kind=kind.get(job))
            )
        elif e.event == "end":
            out.append(Event(e.t, "end", job, e.account, e.gpus, allocated=allocated.get(job), kind=kind.get(job)))
        elif e.event == "reject":
            out.append(Event(e.t, "reject", job, e.account, e.gpus, reason=e.reason, kind=kind.get(job)))
        elif e.event in ("drain", "resume") and (e.event == "resume" or e.state == "unhealthy"):
            out.append(Event(e.t, "drain" if e.event == "drain" else "resume", node=e.node))
    return out


def _later(j: JobSpec, by: float) -> JobSpec:
    deadline = None if j.deadline is None else j.deadline + by
    return replace(j, submit=j.submit + by, deadline=deadline)
