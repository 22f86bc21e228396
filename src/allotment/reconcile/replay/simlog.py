"""The simulator's run of a trace, in the replay's record format, for the side-by-side comparison.

The simulation is ``sim.runner.simulate`` itself (the same passes, the same latency profile the
replay is compared under); its event log (``sim.events``) is translated record by record into the
replay's ``Event`` (which adds the trace's job ``kind``, by which the comparison groups waits).
"""

from __future__ import annotations

from allotment.compile.model import CompiledConfig
from allotment.reconcile.replay.events import Event
from allotment.sim.latency import LatencyProfile
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload


def simulated_events(
    config: CompiledConfig, cluster: str, workload: Workload, latency: LatencyProfile
) -> list[Event]:
    result = simulate(config, workload, cluster=cluster, latency=latency)
    kind = {j.id: j.kind for j in workload.jobs}
    allocated: dict[str, bool] = {}
    out: list[Event] = []
    for e in result.events:
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
