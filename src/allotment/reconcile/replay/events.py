"""The event log (one JSON object per line) and the metrics computed from it.

Format, shared with the simulator's event log: ``{"t", "event", "job", "account", "gpus",
"nodes", "allocated", "by", "rule", "reason"}`` with ``event`` one of submit, start, preempt,
end, reject, reserve, release, drain, resume; ``lost_gpu_hours`` on preempt, ``node`` on drain/resume,
``charged_gpu_hours`` on end, ``decided`` on a replay's start (the tick that decided it: the first of the ticks that
decided it in a row, ``collect.decided_starts``), and ``placed`` when a later one of those ticks' updates still found it
waiting, so the run is that tick's decision.  ``t`` is in trace seconds (a replay at speedup K multiplies
wall seconds by K), so a replay and a simulation of one trace share one time axis.

The metrics are the simulator's own: the records are turned into the simulator's event records
(``sim.events``) and computed by ``sim.events.metrics_from_events``, the one definition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from allotment.compile.interactive import InteractiveClass
from allotment.reconcile.replay.event_lines import parse_lines
from allotment.sim.events import Event as SimEvent
from allotment.sim.events import RunHeader, metrics_from_events
from allotment.sim.job_kind import job_kind

EventKind = Literal["submit", "start", "preempt", "end", "reject", "reserve", "release", "drain", "resume"]
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
    # on a start: when the reconciler's tick that decided it ran (its audit log, trace seconds)
    decided: float | None = None
    # on a start decided again while Slurm had not launched it: the last of those ticks whose
    # update found the job waiting (audit ``applied``), whose placement the run is; absent when
    # that is ``decided``'s (a later update found the run launched: ``unchanged``)
    placed: float | None = None

    def line(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}, sort_keys=True)


def sort_key(e: Event) -> tuple[float, int, str]:
    return (e.t, _ORDER.get(e.event, 4), e.job or e.node or "")


def write_events(path: Path, events: Iterable[Event]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(e.line() + "\n" for e in sorted(events, key=sort_key))
    path.write_text(text, encoding="utf-8")


def read_events(path: Path) -> list[Event]:
    """The events of a log file in time order; every bad line is a ``file:line:col`` error
    (``event_lines``), all of them at once."""
    return sorted(parse_lines(path, Event), key=sort_key)


UNNAMED = "?"  # where a replayed job's GPUs are counted (records name no nodes)


def metrics(
    events: Iterable[Event],
    *,
    teams: Iterable[str],
    capacity: int,
    entitlement: Mapping[str, float],
    node_gpus: Mapping[str, int],
    caps: Mapping[str, float] | None = None,
    debug_threshold_s: float = 900.0,
    min_runtimes: Mapping[str, float] | None = None,
    interactive: InteractiveClass | None = None,
) -> dict[str, Any]:
    """The simulator's metrics of a replay's log: its events become the simulator's own event
    records (``sim.events``) and go through the one ``Recorder`` (``metrics_from_events``), so
    every metric has the simulator's definition.  ``min_runtimes`` (job -> clamped minimum
    runtime, from the trace) says which jobs are debug jobs by the policy's rule; without it an
    allocated ``debug``-kind job counts as one.  Each job's kind is the simulator's
    (``sim.job_kind``: the policy's debug rule, then ``interactive``'s class).  A drained node leaves service at its drain and
    comes back at its resume."""
    evs = sorted(events, key=sort_key)
    end = max((e.t for e in evs), default=0.0)
    header = RunHeader(
        policy="budgets",
        cluster="",
        seed=0,
        end=end,
        capacity_gpus=capacity,
        nodes={**node_gpus, UNNAMED: 0},
        entitlement_gpus=dict(entitlement),
        ceilings=dict(caps or {}),
        debug_threshold_s=debug_threshold_s,
        debug_max_gpus=max(node_gpus.values(), default=0),
        teams=tuple(sorted(teams)),
    )
    return metrics_from_events(header, _as_sim(evs, min_runtimes or {}, header, interactive))


def _as_sim(
    events: Iterable[Event], min_runtimes: Mapping[str, float], header: RunHeader,
    interactive: InteractiveClass | None,
) -> Iterable[SimEvent]:
    """The replay's records as the simulator's: a submit carries the minimum runtime its
    allocation implies (allocated work is charged; 0 marks unallocated work)."""
    running: dict[str, Event] = {}
    for e in events:
        if e.event == "submit":
            if e.allocated is False:
                mr = 0.0
            elif (e.job or "") in min_runtimes:
                mr = min_runtimes[e.job or ""]
            else:  # no trace at hand: the job's kind label stands in for the policy's rule
                mr = header.debug_threshold_s if e.kind == "debug" else header.debug_threshold_s + 1.0
            kind = job_kind(e.kind, mr, e.gpus or 0, debug_threshold_s=header.debug_threshold_s,
                            node_gpus=header.debug_max_gpus, interactive=interactive)
            yield SimEvent(e.t, "submit", job=e.job, account=e.account, gpus=e.gpus, min_runtime=mr, kind=kind)
        elif e.event == "start":
            running[e.job or ""] = e
            # the replay's records count nodes but do not name them: the GPUs sit on one unnamed
            # node of no capacity, so a drained real node leaves service whole (see above)
            yield SimEvent(
                e.t, "start", job=e.job, account=e.account, gpus=e.gpus,
                nodes=(UNNAMED,), node_gpus=(e.gpus or 0,),
                allocated=bool(e.allocated), charged_gpus=float(e.gpus or 0) if e.allocated else 0.0,
            )
        elif e.event in ("preempt", "end") and (e.job or "") in running:
            s = running.pop(e.job or "")
            if e.event == "preempt":
                yield SimEvent(
                    e.t, "preempt", job=e.job, account=s.account, gpus=s.gpus, by=e.by,
                    rule=e.rule or "unknown", requeued=True, lost_gpu_hours=e.lost_gpu_hours or 0.0,
                )
            else:
                yield SimEvent(e.t, "end", job=e.job, account=s.account, gpus=s.gpus)
        elif e.event == "reject":
            yield SimEvent(e.t, "reject", job=e.job, account=e.account, gpus=e.gpus, reason=e.reason)
        elif e.event in ("drain", "resume") and e.node:
            yield SimEvent(e.t, e.event, node=e.node, state="unhealthy" if e.event == "drain" else None)
