"""Did the machine stop during a replay?  Then the replay is void: neither passed nor failed
(issue 30, docs/fidelity.md "The eighth pass").

The gate follows the cluster's ticks as they read and Slurm's launches as they ran
(``read_times``), but a run on the cluster lasts its work only while its job is running.  When
the whole machine stops (seed 9: no read from 210.97 s to 227.61 s, runs ending 13 s past
their work), every run in flight ends late on the cluster and on time in the simulation, and
every decision after it parts.  No simulator should predict a stopped machine, and a gate that
fails on one blocks every change by chance; one that passes on one has measured nothing.

Both thresholds come from the reconcile interval (the tick), not from fitted data: a stall is
something the replay measures stopping for **more than one whole tick beyond its own spacing**,
so that a run can end on the other side of at least one read than its twin.

* **The reconciler's reads** are one per tick.  A tick that overran its slot skips to the next
  one (``drive._tick_on_grid``, ``late_ticks``), so two reads can lie two intervals apart, and
  the gate passes at those reads: its spacing is two intervals, a stall a gap over three.
* **A job's own seconds**: its script stamps the top of each second (``beat``, with ``start``
  and ``end``; ``submit.script``), one second apart, or one second and the checkpoint's write
  (``CHECKPOINT_WRITE_S``, 0.4 s) after a second that wrote one; a gap over that plus one
  interval is the job stopped for more than a tick.  A run's stamps end at its ``end`` or at a requeue's
  kill; the next ``start`` is another run, so no gap spans a requeue.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from allotment.reconcile.replay.collect import ScriptTime, script_times
from allotment.reconcile.replay.events import Event
from allotment.reconcile.replay.submit import CHECKPOINT_WRITE_S

EXIT_VOID = 3  # the CLI's "backend failure": the machine could not give a measurement
READ_SPACING_TICKS = 2  # a late tick skips one slot: reads up to two intervals apart
SECOND_S = 1.0 + CHECKPOINT_WRITE_S  # the script's own spacing, at most: a second and a write


@dataclass(frozen=True, slots=True)
class Stall:
    """A gap in what the replay measured; a stall when longer than ``allowed_s``, its spacing
    plus one tick (``read_stalls``, ``script_stalls`` return only those)."""

    who: str  # "reads" (the reconciler's), or the trace job whose script stopped
    after_s: float  # trace seconds: the last stamp before the gap
    until_s: float  # and the first after it
    allowed_s: float  # the longest gap that is no stall

    @property
    def gap_s(self) -> float:
        return self.until_s - self.after_s


def replay_stalls(
    reads: Sequence[float] | None, events: Sequence[Event], jobs_dir: Path | None, interval_s: float
) -> tuple[Stall, ...]:
    """Every stall of one replay: in its reads (``reads.json``) and in its jobs' own seconds
    (``<jobs_dir>/<id>.times``, when kept), in trace seconds."""
    found = list(read_stalls(reads or (), interval_s))
    stamps = read_stamps(jobs_dir)
    origin = origin_from(events, stamps)
    if origin is not None:
        found += script_stalls(stamps, origin, interval_s)
    return tuple(sorted(found, key=lambda s: (s.after_s, s.who)))


def widest_gaps(
    reads: Sequence[float] | None, events: Sequence[Event], jobs_dir: Path | None
) -> tuple[float, float | None]:
    """The widest gap of the reads and of the scripts' seconds (None: no beats kept): how far
    under its thresholds a replay stayed."""
    stamps = read_stamps(jobs_dir)
    origin = origin_from(events, stamps)
    own = [g.gap_s for g in _script_gaps(stamps, origin, 0.0)] if origin is not None else []
    return max((g.gap_s for g in _read_gaps(reads or (), 0.0)), default=0.0), max(own, default=None)


def read_stamps(jobs_dir: Path | None) -> dict[str, tuple[ScriptTime, ...]]:
    """Each trace job's script stamps (``<jobs_dir>/<id>.times``), none without the folder."""
    if jobs_dir is None or not jobs_dir.is_dir():
        return {}
    return {
        f.name.removesuffix(".times"): script_times(f.read_text(encoding="utf-8"))
        for f in sorted(jobs_dir.glob("*.times"))
    }


def read_stalls(reads: Sequence[float], interval_s: float) -> tuple[Stall, ...]:
    """Gaps between consecutive tick reads (trace seconds) over three intervals."""
    allowed = (READ_SPACING_TICKS + 1) * interval_s
    return tuple(g for g in _read_gaps(reads, allowed) if g.gap_s > allowed)


def _read_gaps(reads: Sequence[float], allowed_s: float) -> tuple[Stall, ...]:
    return tuple(Stall("reads", a, b, allowed_s) for a, b in pairwise(reads))


def script_stalls(
    stamps: Mapping[str, Sequence[ScriptTime]], origin_unix: float, interval_s: float
) -> tuple[Stall, ...]:
    """Gaps over a second and a write plus one interval between consecutive stamps of one run
    of a job (``origin_unix``: the replay's time 0, so the stalls read in trace seconds;
    ``--compare`` replays at speedup 1).  A run without beats (a harness before them) has no
    seconds to judge: its start and end are a whole run apart."""
    allowed = SECOND_S + interval_s
    return tuple(g for g in _script_gaps(stamps, origin_unix, allowed) if g.gap_s > allowed)


def _script_gaps(
    stamps: Mapping[str, Sequence[ScriptTime]], origin_unix: float, allowed_s: float
) -> tuple[Stall, ...]:
    out = []
    for job in sorted(stamps):
        for run in _runs(stamps[job]):
            if any(s.kind == "beat" for s in run):
                out += [
                    Stall(
                        job, round(a.at - origin_unix, 3), round(b.at - origin_unix, 3), allowed_s
                    )
                    for a, b in pairwise(run)
                ]
    return tuple(sorted(out, key=lambda s: (s.after_s, s.who)))


def _runs(stamps: Sequence[ScriptTime]) -> list[list[ScriptTime]]:
    runs: list[list[ScriptTime]] = []
    for s in stamps:
        if s.kind == "start" or not runs:
            runs.append([])
        runs[-1].append(s)
    return runs


def origin_from(
    events: Sequence[Event], stamps: Mapping[str, Sequence[ScriptTime]]
) -> float | None:
    """The replay's time 0 in Unix seconds, from a saved replay: each job's first run start in
    the event log is its script's own ``start`` stamp when that fell within sacct's second
    (``collect.events_from_runs``), so stamp minus event time is time 0 for nearly every job;
    the median keeps the few taken from sacct's half second out."""
    first: dict[str, float] = {}
    for e in sorted(events, key=lambda e: e.t):
        if e.event == "start" and e.job:
            first.setdefault(e.job, e.t)
    guesses = [
        next(s.at for s in stamps[job] if s.kind == "start") - t
        for job, t in first.items()
        if any(s.kind == "start" for s in stamps.get(job, ()))
    ]
    return statistics.median(guesses) if guesses else None


def void_line(stalls: Sequence[Stall], interval_s: float) -> str | None:
    """The one line a void replay prints (the longest stall, and how many there were), or
    None when nothing stopped."""
    if not stalls:
        return None
    worst = max(stalls, key=lambda s: (s.gap_s, -s.after_s))
    who = "no reconciler read" if worst.who == "reads" else f"job {worst.who}'s script stopped"
    more = f"; {len(stalls) - 1} more gap(s)" if len(stalls) > 1 else ""
    return (
        f"fidelity: VOID, neither passed nor failed: the machine stopped during the replay "
        f"({who} from {worst.after_s:.2f} s to {worst.until_s:.2f} s: {worst.gap_s:.1f} s, "
        f"where a gap over {worst.allowed_s:g} s is a stall at {interval_s:g} s ticks{more}); "
        "rerun it, on a quieter machine if it stalls again (docs/fidelity.md, the eighth pass)"
    )
