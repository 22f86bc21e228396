"""The simulator's run of a trace, observed as an event log in the replay's format.

The simulation is ``sim.runner``'s own (the same ``_Sim``, the same passes); this subclass only
watches it: arrivals, each pass's starts and preemptions, completions and health changes become
events.  It stands in until the simulator writes its event log itself (``allot simulate
--events``, the sim engineer's item), and should then be replaced by it.
"""

from __future__ import annotations

import math
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.reconcile.replay.events import Event
from allotment.sim.latency import LatencyProfile
from allotment.sim.runner import HEALTH, _Sim
from allotment.traces.scenarios.workload import Workload


class _Observed(_Sim):
    events: list[Event]

    def _enqueue(self, spec: JobSpec, now: float) -> None:
        super()._enqueue(spec, now)
        n, _ = self.sched.pool.shape(spec)
        self.events.append(
            Event(
                now,
                "submit",
                spec.id,
                spec.account,
                spec.gpus,
                n,
                self._budgeted(spec),
                kind=spec.kind,
            )
        )

    def _stopped(self, spec: JobSpec, now: float, *, completed: bool) -> None:
        rate = self.starts[spec.id][1]
        super()._stopped(spec, now, completed=completed)
        if completed:
            self.events.append(
                Event(
                    now, "end", spec.id, spec.account, spec.gpus, allocated=rate > 0, kind=spec.kind
                )
            )

    def _apply(self, kind: int, payload: Any, now: float) -> bool:
        changed = super()._apply(kind, payload, now)
        if kind == HEALTH and changed:
            node, healthy = payload
            self.events.append(Event(now, "resume" if healthy else "drain", node=node))
        return changed

    def _pass(self, now: float) -> None:
        running = dict(self.sched.running)
        super()._pass(now)
        d = self.last_decisions
        launch = self.latency.launch_delay_s
        for p in d.preemptions:
            r = running.get(p.job_id)
            spec = self.by_id[p.job_id]
            self.events.append(
                Event(
                    now,
                    "preempt",
                    spec.id,
                    spec.account,
                    spec.gpus,
                    allocated=bool(r and r.allocated),
                    by=p.for_job,
                    rule=p.rule,
                    reason=p.reason,
                    lost_gpu_hours=round(p.lost_work * spec.gpus / 3600.0, 6),
                    kind=spec.kind,
                )
            )
        for st in d.starts:
            spec = self.by_id[st.job_id]
            self.events.append(
                Event(
                    now + launch,
                    "start",
                    spec.id,
                    spec.account,
                    spec.gpus,
                    len(st.placement),
                    st.allocated,
                    rule="start",
                    reason=st.reason,
                    kind=spec.kind,
                )
            )


def simulated_events(
    config: CompiledConfig, cluster: str, workload: Workload, latency: LatencyProfile
) -> list[Event]:
    ctx = build_context(config, cluster)
    sim = _Observed(config, cluster, workload, None, ctx)
    sim.latency = latency
    sim.events = []
    sim.run()
    assert not math.isinf(sim.end)
    return sim.events
