"""When each reconciler tick of a replay really read the cluster, so the comparison can pass
where the ticks ran (issue 30, docs/fidelity.md "the tick as it ran").

The nominal ``slurm-test`` profile puts every pass 0.9 s after the grid instant; on a loaded
machine a tick reads later (0.7-1.3 s) or skips its slot, and an arrival or an end inside that
spread is seen a tick apart by the two cores.  The replay knows when each read happened: this
backend keeps the instant of every ``observe()`` (the wall clock just before ``squeue``, which
the observation is stamped with), the replay keeps each tick's first (its decision read; the
backend observes again to check the tick's starts) and writes them, in trace seconds, to
``<state>/reads.json`` for ``allot replay --compare`` (``--from-events ... --reads``).
"""

from __future__ import annotations

import bisect
import json
import math
from pathlib import Path

from allotment.backends.protocol import Observation
from allotment.backends.slurm.backend import SlurmBackend
from allotment.core.jobs import NodeEvent
from allotment.errors import UsageError
from allotment.reconcile.replay.events import Event
from allotment.sim.latency import LatencyProfile, RunEnd, RunStart

READS_FILE = "reads.json"


class ReadTimedSlurm(SlurmBackend):
    """The Slurm backend, keeping the wall-clock instant of every observation it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[float] = []

    def observe(self) -> Observation:
        obs = super().observe()
        self.reads.append(obs.at)
        return obs


def as_ran(
    nominal: LatencyProfile, reads: tuple[float, ...], events: list[Event],
    node_events: tuple[NodeEvent, ...] = (),
) -> LatencyProfile:
    """The profile the gate judges a replay with: passes at its reads (past what the tick
    acted on, ``seen_submissions``; ``node_events``: the trace's), each start the
    simulator decides at the read the cluster decided it launching when Slurm launched it
    (the replay's ``start`` events: sacct's second, at its middle), and a requeue decided at
    the read before a run's end that the cluster's requeue found ended completing it."""
    starts = tuple(RunStart(e.job, e.t, e.decided, e.placed) for e in events if e.event == "start" and e.job)
    return nominal.as_run(seen_submissions(reads, events, node_events), starts, ended_first(events))


def seen_submissions(
    reads: tuple[float, ...], events: list[Event], node_events: tuple[NodeEvent, ...] = ()
) -> tuple[float, ...]:
    """``reads`` with a read moved to just after what its tick acted on: the instant kept is
    the wall clock before ``squeue`` ran, and the snapshot it returned can hold a job
    ``sbatch`` sent a few milliseconds later (seed 7: f029 submitted at 136.902, started by
    the tick reading at 136.896); the tick reads the health file after ``squeue`` (seed 8:
    n4 healthy again at 218.9, resumed, and f011 started on it, by the tick reading at
    218.884).  The audit log says that tick saw them (a start it decided, a drain or resume
    it applied: the event log's ``decided`` and ``drain``/``resume`` times), so its pass does."""
    submit = {e.job: e.t for e in events if e.event == "submit" and e.job}
    seen: list[tuple[float, float]] = []  # (the tick, what it saw when)
    for e in events:
        if e.event == "start" and e.decided is not None and e.job in submit:
            seen.append((e.decided, submit[e.job]))
    for e in events:
        if e.event in ("drain", "resume") and e.node:
            healthy = e.event == "resume"
            when = [n.time for n in node_events if n.node == e.node and (n.state == "healthy") == healthy
                    and n.time <= e.t + 3.0]
            if when:
                seen.append((e.t, max(when)))
    out = sorted(reads)
    for tick, at in seen:
        i = bisect.bisect_left(out, tick - 1e-9)  # the tick's read
        later = out[i + 1] if i + 1 < len(out) else math.inf
        if i < len(out) and out[i] < at < later:
            out[i] = round(at + 0.001, 3)
    return tuple(out)


def ended_first(events: list[Event]) -> tuple[RunEnd, ...]:
    """The runs a requeue found ended: ``end`` events carrying the requeue's rule
    (``collect.events_from_runs``; a run that simply ended has none)."""
    return tuple(RunEnd(e.job, e.t) for e in events if e.event == "end" and e.job and e.rule)


def trace_reads(wall: list[float], t0: float, speedup: float) -> tuple[float, ...]:
    """The reads at or after the replay's time 0, in trace seconds (ms), in order."""
    return tuple(sorted(round((w - t0) * speedup, 3) for w in wall if w >= t0))


def write_reads(path: Path, reads: tuple[float, ...]) -> None:
    path.write_text(json.dumps({"reads_s": list(reads)}) + "\n", encoding="utf-8")


def read_reads(path: Path) -> tuple[float, ...]:
    """``--reads FILE``: a replay's ``reads.json``; anything else is refused as usage."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        reads = [float(r) for r in data["reads_s"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--reads {path}: not a replay's {READS_FILE} ({exc})") from None
    if any(not 0 <= r < 1e9 for r in reads) or reads != sorted(reads):
        raise UsageError(f"--reads {path}: read instants must be finite, >= 0 and in order")
    return tuple(reads)
