"""What really happened, from ``sacct -D`` and the reconciler's audit log, as events.

``sacct -D`` (``--duplicates``) lists every run of a job, so a job requeued twice shows three
records: two ``REQUEUED`` (the runs the reconciler ended) and its final one.  Times come as Unix
seconds (``SLURM_TIME_FORMAT=%s``).  A run that ended ``REQUEUED`` or ``PREEMPTED`` is a
preempt event with the rule and reason of the reconciler's requeue of that job at that time
(its audit record); any other ending is an end.  sacct's times are whole seconds, so each is
taken as the middle of its second, unless the run's script wrote its own start or end within
that second (``<id>.times``, to the millisecond: then that instant; issue 30, on which side of
a tick's read a run ended decided a start), and a submission is never later than the job's first start.  An
end whose run a requeue found already ended (the reconciler decided it while the run ran and
its ``scontrol requeue`` came after the run completed: ``unchanged`` in the audit log) carries
that requeue's rule (``found_ended``; docs/fidelity.md residual 3).  Drains and resumes are the reconciler's applied
drain/resume actions.  Reservations are the core's own bookkeeping, invisible in Slurm: the
replay log has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from allotment.backends.slurm.shape import gpus_in
from allotment.core.jobs import JobSpec
from allotment.reconcile.active import START_RULE
from allotment.reconcile.audit import entry_time
from allotment.reconcile.replay.events import Event, EventKind, sort_key

SACCT_FIELDS = "JobIDRaw,JobName,State,Start,End,AllocTRES,NodeList"
PREEMPTED = ("REQUEUED", "PREEMPTED")


@dataclass(frozen=True, slots=True)
class ScriptTime:
    """A replayed job's script's own ``start``, ``beat`` (the top of each second) or ``end`` of
    a run (Unix seconds, ms)."""

    kind: str
    at: float


def script_times(text: str) -> tuple[ScriptTime, ...]:
    """A job's ``<id>.times`` (``submit.script``): ``start <s>``, ``beat <s>`` (each second) and
    ``end <s>`` lines, in the file's order; a line cut short by a kill is left out."""
    out = []
    for line in text.splitlines():
        kind, _, value = line.partition(" ")
        try:
            out.append(ScriptTime(kind, float(value)))
        except ValueError:
            continue
    return tuple(x for x in out if x.kind in ("start", "beat", "end"))


# Slurm closes a job's accounting record and opens another, same id and start, when the
# job's allocation is changed while it runs; the closed one reads RESIZING.  An update that
# reached a job launched a moment before (its ``ReqNodeList``) made one on the cluster (seed 13,
# 2026-12-07: job 46, a zero-length RESIZING record beside the run that COMPLETED): not a
# run of its own, and counted as one it made a second start and an end of no length
RESIZING = "RESIZING"


@dataclass(frozen=True, slots=True)
class Run:
    job_id: str  # Slurm's
    name: str
    state: str
    start: float
    end: float
    gpus: int
    nodes: int


def parse_sacct(text: str) -> list[Run]:
    """``sacct -D -X -n -P -o SACCT_FIELDS`` lines; runs that never started are left out."""
    out = []
    for line in text.splitlines():
        cols = line.split("|")
        if len(cols) < 7 or not cols[3].strip().isdigit():
            continue
        jid, name, state, start, end, tres, nodelist = cols[:7]
        if not end.strip().isdigit():
            continue  # still running: the replay waits for the queue to empty first
        if state.split()[0] == RESIZING:
            continue  # an accounting record of a resize, not a run: the job ran on, whole
        nodes = nodelist.count(",") + 1 if nodelist and nodelist != "None assigned" else 0
        if "node=" in tres:
            nodes = int(tres.split("node=")[1].split(",")[0])
        out.append(Run(jid, name, state.split()[0], float(start), float(end), gpus_in(tres), nodes))
    return sorted(out, key=lambda r: (r.start, r.job_id))


def events_from_runs(
    runs: Sequence[Run],
    jobs: Mapping[str, JobSpec],  # job name ("replay-<id>") -> the trace job
    audit: Sequence[Mapping[str, object]],
    *,
    t0: float,
    speedup: float,
    allocated: Mapping[str, bool],
    script_times: Mapping[str, Sequence[ScriptTime]] | None = None,  # trace job id -> its runs'
) -> list[Event]:
    def t(wall: float, whole: bool = True) -> float:
        # sacct reports whole seconds: take the middle of the second
        return round((wall + (0.5 if whole else 0.0) - t0) * speedup, 3)

    own = dict(script_times or {})

    def at(r: Run, kind: str, sacct_s: float) -> float:
        """The run's own start or end (its script's, to the millisecond) within sacct's
        second, else the middle of that second."""
        mine = own.get(jobs[r.name].id, ())
        near = [x.at for x in mine if x.kind == kind and sacct_s - 0.5 <= x.at < sacct_s + 1.5]
        return t(min(near, key=lambda w: abs(w - sacct_s - 0.5)), whole=False) if near else t(sacct_s)

    requeues: dict[str, list[Mapping[str, object]]] = {}
    for a in audit:
        if a.get("action") in ("requeue", "cancel") and a.get("result") == "applied":
            requeues.setdefault(str(a.get("target")), []).append(a)
    out: list[Event] = []
    charged: dict[str, float] = {}
    for r in runs:
        spec = jobs.get(r.name)
        if spec is None:
            continue
        alloc = allocated[spec.id]
        base = {"job": spec.id, "account": spec.account, "gpus": r.gpus, "nodes": r.nodes}
        began = at(r, "start", r.start)
        out.append(Event(began, "start", allocated=alloc, kind=spec.kind, **base))  # type: ignore[arg-type]
        hours = r.gpus * (r.end - r.start) * speedup / 3600.0
        # a run can end in the second it started (a requeued job whose checkpoint already
        # held all its work): keep its end after its start so the two still pair up
        stop = max(t(r.end) if r.state in PREEMPTED else at(r, "end", r.end), began + 0.001)
        if alloc:
            charged[spec.id] = charged.get(spec.id, 0.0) + hours
        if r.state in PREEMPTED:
            why = _nearest(requeues.get(r.job_id, []), r.end)
            lost = 0.0 if spec.resumable else hours
            out.append(
                Event(
                    stop,
                    "preempt",
                    allocated=alloc,
                    rule=str(why.get("rule")) if why else "backend",
                    reason=str(why.get("reason")) if why else f"Slurm: {r.state}",
                    lost_gpu_hours=round(lost, 6),
                    kind=spec.kind,
                    **base,  # type: ignore[arg-type]
                )
            )
        else:
            out.append(
                Event(
                    stop,
                    "end",
                    allocated=alloc,
                    reason=r.state,
                    charged_gpu_hours=round(charged.get(spec.id, 0.0), 6),
                    kind=spec.kind,
                    **base,  # type: ignore[arg-type]
                )
            )
    job_of = {r.job_id: jobs[r.name].id for r in runs if r.name in jobs}
    def exact(wall: float) -> float:  # an audit time is exact, not sacct's whole second
        return t(wall, whole=False)

    marked = found_ended(out, audit, job_of, exact)
    return decided_starts(marked, audit, job_of, exact) + _health_events(audit, t)


def _by_job(
    audit: Sequence[Mapping[str, object]],
    job_of: Mapping[str, str],
    trace_time: Callable[[float], float],
    action: str,
    result: str,
) -> dict[str, list[tuple[float, str]]]:
    """Each trace job's audit records of ``action`` with ``result``: (trace time, rule), in
    the audit's order -- what ``decided_starts`` and ``found_ended`` read of the audit log."""
    got: dict[str, list[tuple[float, str]]] = {}
    for a in audit:
        job = job_of.get(str(a.get("target")))
        if a.get("action") == action and a.get("result") == result and job is not None:
            got.setdefault(job, []).append((trace_time(entry_time(a)), str(a.get("rule"))))
    return got


def decided_starts(
    events: Sequence[Event],
    audit: Sequence[Mapping[str, object]],
    job_of: Mapping[str, str],  # Slurm job id -> trace job id
    trace_time: Callable[[float], float],  # an audit record's Unix time -> trace seconds
) -> list[Event]:
    """``events`` with each ``start`` carrying when the tick that decided it ran: the first of
    the unbroken run of the job's start decisions (``set_priority``, rule ``start``, applied
    or found already set) at most 10 s before the run's start.  A tick re-decides a start Slurm has not launched yet
    (seed 11, 2026-12-06: the tick that resumed n4 decided f023 on it at 222.5, Slurm launched
    it only after the next tick's read, which decided it again), and a ``set_priority`` of
    another rule between two (the core ordering the job, not starting it) breaks the run.  The
    gate's simulation launches its start decided at that tick's read when Slurm launched this
    run, however late (``sim.latency.launch_after``).  The run is the last decision whose
    update found the job waiting (``applied``): when that is a later tick's, the start carries
    it as ``placed``, and the simulation decides the start again there
    (``sim.latency.redecided_at``); a later update that found the run launched
    (``unchanged``; seed 11, 2026-12-07: f016) left the run an earlier decision's."""
    said: dict[str, list[tuple[float, str, bool]]] = {}
    for result in ("applied", "unchanged"):
        for job, ds in _by_job(audit, job_of, trace_time, "set_priority", result).items():
            said.setdefault(job, []).extend((d, rule, result == "applied") for d, rule in ds)
    out = []
    for e in events:
        if e.event == "start" and e.job in said:
            first = placed = None
            near = sorted((x for x in said[e.job] if e.t - 10.0 <= x[0] <= e.t), key=lambda x: x[0])
            for d, rule, landed in reversed(near):
                if rule != START_RULE:  # the audit line of a start action (active.is_start)
                    break
                first = d
                if landed and placed is None:
                    placed = d
            if first is not None:
                e = replace(e, decided=first, placed=placed if placed is not None and placed > first else None)
        out.append(e)
    return out


def found_ended(
    events: Sequence[Event],
    audit: Sequence[Mapping[str, object]],
    job_of: Mapping[str, str],  # Slurm job id -> trace job id
    trace_time: Callable[[float], float],  # an audit record's Unix time -> trace seconds
) -> list[Event]:
    """``events`` with each ``end`` of a run that a requeue found ended carrying the requeue's
    rule: a requeue of the job ``unchanged`` (the job no longer ran) decided at or after that
    run's start (less sacct's half second) and at most 5 s after its end.  The gate's
    simulation completes such a run where it requeues it at the same read (``read_times``)."""
    missed = _by_job(audit, job_of, trace_time, "requeue", "unchanged")
    started: dict[str, float] = {}
    out = []
    for e in sorted(events, key=sort_key):
        if e.event == "start" and e.job:
            started[e.job] = e.t
        elif e.event == "end" and e.job in missed and e.job in started:
            hits = [m for m in missed[e.job] if started[e.job] - 0.5 <= m[0] <= e.t + 5.0]
            if hits:
                e = replace(e, rule=max(hits)[1], reason=f"{e.reason} before its requeue landed")
        out.append(e)
    return out


def _health_events(audit: Sequence[Mapping[str, object]], t: Callable[..., float]) -> list[Event]:
    """The reconciler's applied drains and resumes (their audit times are exact)."""
    out = []
    for a in audit:
        if a.get("action") in ("drain", "resume") and a.get("result") == "applied":
            kind: EventKind = "drain" if a["action"] == "drain" else "resume"
            at = entry_time(a)
            out.append(
                Event(
                    t(at, whole=False),
                    kind,
                    node=str(a["target"]),
                    rule=str(a.get("rule")),
                    reason=str(a.get("reason")),
                )
            )
    return out


def _nearest(records: list[Mapping[str, object]], at: float) -> Mapping[str, object] | None:
    """The audit record of the requeue that ended a run at ``at`` (the latest one before)."""
    before = [a for a in records if entry_time(a) <= at + 5.0]
    return max(before, key=entry_time, default=None)
