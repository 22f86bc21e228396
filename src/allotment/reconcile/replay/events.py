"""The event log (one JSON object per line) and the metrics computed from it.

Format, shared with the simulator's event log: ``{"t", "event", "job", "account", "gpus",
"nodes", "allocated", "by", "rule", "reason"}`` with ``event`` one of submit, start, preempt,
end, reject, reserve, drain, resume; ``lost_gpu_hours`` on preempt, ``node`` on drain/resume,
``charged_gpu_hours`` on end.  ``t`` is in trace seconds (a replay at speedup K multiplies
wall seconds by K), so a replay and a simulation of one trace share one time axis.

The metrics are the simulator's own: the events drive a ``sim.metrics.Recorder`` with the same
calls the simulator makes (submit -> eligible and demand, start -> first start and running,
preempt/end -> not running, end -> demand gone), then ``Recorder.summary``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from allotment.sim.metrics import Recorder

EventKind = Literal["submit", "start", "preempt", "end", "reject", "reserve", "drain", "resume"]
# at one time: health first, then stops free GPUs, then submissions, then starts (the
# simulator's order of events within one instant)
_ORDER = {"drain": 0, "resume": 0, "preempt": 1, "end": 1, "reject": 2, "submit": 2, "start": 3}


@dataclass(frozen=True, slots=True)
class Event:
    t: float
    event: EventKind
    job: str | None = None
    account: str | None = None
    gpus: int | None = None
    nodes: int | None = None
    allocated: bool | None = None
    by: str | None = None
    rule: str | None = None
    reason: str | None = None
    lost_gpu_hours: float | None = None
    node: str | None = None
    charged_gpu_hours: float | None = None
    kind: str | None = None  # the trace job's kind (debug, train...): waits are per kind

    def line(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}, sort_keys=True)


def sort_key(e: Event) -> tuple[float, int, str]:
    return (e.t, _ORDER.get(e.event, 4), e.job or e.node or "")


def write_events(path: Path, events: Iterable[Event]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(e.line() + "\n" for e in sorted(events, key=sort_key))
    path.write_text(text, encoding="utf-8")


def read_events(path: Path) -> list[Event]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            out.append(Event(**{k: raw.get(k) for k in Event.__slots__}))
    return sorted(out, key=sort_key)


def metrics(
    events: Iterable[Event],
    *,
    teams: Iterable[str],
    capacity: int,
    entitlement: Mapping[str, float],
    node_gpus: Mapping[str, int],
    caps: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The simulator's metrics from an event log.  A drained node leaves service whole at its
    drain and comes back at its resume (the simulator takes busy GPUs out as their jobs stop:
    slightly more capacity while a node drains)."""
    rec = Recorder(teams, capacity, entitlement, caps)
    running: dict[str, Event] = {}
    end = 0.0
    for e in sorted(events, key=sort_key):
        end = max(end, e.t)
        job = e.job or ""
        budgeted = bool(e.allocated)
        if e.event == "submit":
            rec.submitted += 1
            rec.job_eligible(job, e.kind or "batch", e.gpus or 0, e.t, e.account or "")
            rec.demand_change(e.t, e.account or "", e.gpus or 0, budgeted)
        elif e.event == "reject":
            rec.rejected += 1
        elif e.event == "start":
            running[job] = e
            rec.first_start(job, e.t)
            rec.run_change(e.t, e.account or "", e.gpus or 0, budgeted, budgeted)
        elif e.event in ("preempt", "end") and job in running:
            s = running.pop(job)
            rec.run_change(e.t, s.account or "", -(s.gpus or 0), budgeted, budgeted)
            if e.event == "preempt":
                lost_s = (e.lost_gpu_hours or 0.0) * 3600.0 / max(1, s.gpus or 1)
                rec.preempted(e.rule or "unknown", lost_s, s.gpus or 0)
            else:
                rec.completed += 1
                rec.demand_change(e.t, s.account or "", -(s.gpus or 0), budgeted)
        elif e.event in ("drain", "resume") and e.node in node_gpus:
            gpus = node_gpus[e.node or ""]
            rec.health_change(e.t, -gpus if e.event == "drain" else gpus)
            if e.event == "drain":
                rec.drains.append((e.t, None, None))
            elif rec.drains:
                s0, emptied, _ = rec.drains[-1]
                rec.drains[-1] = (s0, emptied, e.t)
    return rec.summary(end)
