"""The ``--json`` metrics of a run, from what the ``Recorder`` integrated (docs/metrics.md).

Owed and delivered are capped hour by hour: in each hour a team is owed its allocation
(entitlement x in-service fraction, at most its ``max_gpus`` ceiling) capped at its demand, and
delivered at most what it was owed, so GPUs borrowed in one hour cannot hide a shortfall in
another.  The uncapped figure is reported beside it as ``received``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from allotment.sim.job_kind import JOB_KINDS
from allotment.sim.signals import HOUR
from allotment.sim.spilled_doubles import SpilledDoubles
from allotment.spill import Spill

LARGE_GPUS: Final = 64  # a "large" job for wait.large: this many GPUs, or half a smaller cluster (large_from)


def large_from(capacity_gpus: int) -> int:
    """The GPUs from which a job is "large" (``wait.large``): 64, or half the cluster where that is
    less (issue 25: on the 88-GPU b200 no job reached 64, so the class was always empty there)."""
    return min(LARGE_GPUS, max(1, math.ceil(capacity_gpus / 2)))

if TYPE_CHECKING:
    from allotment.sim.metrics import Recorder


class TeamHour:
    """One team's hour, in GPU-seconds: what it was owed and what its budgeted work ran.

    A plain class with ``Final`` fields (write-once, compiled), not a frozen dataclass: the
    summary builds one per team and hour (24,000 on the 66-day Philly-shaped cut), and a frozen
    dataclass's ``__init__`` runs interpreted even under mypyc, 158 M instructions there (issue
    27 item 1, docs/benchmarks.md "Stop 46")."""

    __slots__ = ("owed", "ran")

    def __init__(self, owed: float, ran: float) -> None:
        self.owed: Final = owed  # min(allocation, demand) over the hour
        self.ran: Final = ran  # uncapped

    @property
    def delivered(self) -> float:
        """Capped hour by hour: GPUs borrowed in this hour count for nothing beyond it."""
        return min(self.ran, self.owed)


def team_hours(rec: Recorder, team: str) -> list[TeamHour]:
    """Each hour of ``[0, end)`` of ``team`` (the last one may be partial); the one definition
    of owed, read by the summary and by analyses of where a shortfall comes from."""
    end = rec.header.end
    n_hours = max(1, math.ceil(end / HOUR))
    for s in (rec.healthy, rec.team_run[team], rec.team_demand[team]):
        s.advance(end)
    ent = rec.header.entitlement_gpus.get(team, 0.0)
    ceiling = rec.header.ceilings.get(team, math.inf)
    capacity = rec.header.capacity_gpus
    out = []
    for h in range(n_hours):
        secs = min(HOUR, max(0.0, end - h * HOUR))
        if secs <= 0:
            out.append(TeamHour(0.0, 0.0))
            continue
        in_service = rec.healthy.hour(h) / (capacity * secs)
        owed_h = min(min(ent * in_service, ceiling) * secs, rec.team_demand[team].hour(h))
        out.append(TeamHour(owed_h, rec.team_run[team].hour(h)))
    return out


def _team_hours(rec: Recorder, team: str) -> tuple[float, float, float]:
    """(owed, delivered capped hour by hour, ran uncapped) in GPU-seconds."""
    hours = team_hours(rec, team)
    return sum(x.owed for x in hours), sum(x.delivered for x in hours), sum(x.ran for x in hours)


# one double a wait, not a float object and a list slot (32 bytes): at 1M jobs the summary's
# lists of every wait were the run's peak (issue 32 item 5; docs/benchmarks.md, "Stop 39"); a
# chunk of each in memory, the rest spilled to a temporary file ("Stop 40")
_Lists = dict[str, SpilledDoubles]
_CLASSES: Final = ("all", *JOB_KINDS, "large")  # the keys of ``wait`` and ``pending``, in order


def waits(rec: Recorder, end: float, start: float = 0.0) -> tuple[_Lists, _Lists, _Lists, _Lists]:
    """First-start waits and total pending time by class (all, each job kind of
    ``sim.job_kind``, large) and by team, of the jobs first eligible in ``[start, end)``
    (``start`` > 0: a warm-up is left out, sim.window).  The one definition of a wait: the
    summary, the report's distributions and the plan comment all read these lists.

    A job eligible before ``end`` that never started waits until ``end`` (censored, not dropped);
    the total pending time adds every wait after a requeue, the open one censored at ``end``.  A
    job the policy rejected never waited for GPUs: it is counted apart (``jobs.rejected``), not
    as a wait to the end of the run (``wait.large`` p90 read 562 h where the jobs that ran
    waited 18.6 h)."""
    large = large_from(rec.header.capacity_gpus)
    spill = Spill()
    first: _Lists = {c: SpilledDoubles(spill) for c in _CLASSES}
    pending: _Lists = {c: SpilledDoubles(spill) for c in _CLASSES}
    team_first: _Lists = {t: SpilledDoubles(spill) for t in rec.teams}
    team_pending: _Lists = {t: SpilledDoubles(spill) for t in rec.teams}
    for j in rec.all_jobs():
        if j.eligible is None or j.eligible >= end or j.eligible < start or j.rejected:
            continue
        w = (j.first_start if j.first_start is not None else end) - j.eligible
        p = j.pending_total + (end - j.pending_since if j.pending_since is not None else 0.0)
        classes = ("all", j.kind, "large") if j.gpus >= large else ("all", j.kind)
        for c in classes:
            first[c].append(w)
            pending[c].append(p)
        if j.account in team_first:
            team_first[j.account].append(w)
            team_pending[j.account].append(p)
    return first, pending, team_first, team_pending


def summarize(rec: Recorder) -> dict[str, Any]:
    hdr = rec.header
    end = hdr.end
    n_hours = max(1, math.ceil(end / HOUR))
    for s in [rec.healthy, rec.charged, rec.free_work, rec.demand, *rec.team_run.values(), *rec.team_demand.values()]:
        s.advance(end)
    healthy = sum(rec.healthy.hours[:n_hours])
    charged = sum(rec.charged.hours[:n_hours])
    free = sum(rec.free_work.hours[:n_hours])
    first, pending, team_first, team_pending = waits(rec, end)
    teams: dict[str, dict[str, Any]] = {}
    owed_total = delivered_total = ran_total = 0.0
    for t in rec.teams:
        owed, delivered, ran = (x / HOUR for x in _team_hours(rec, t))
        teams[t] = {
            "owed": _r(owed),
            "delivered": _r(delivered),
            "received_gpu_hours": _r(ran),
            "ratio": _r(delivered / owed) if owed > 0 else 1.0,
            "received": _r(ran / owed) if owed > 0 else 1.0,
            "wait": percentiles(team_first[t]),
            "pending": percentiles(team_pending[t]),
        }
        owed_total += owed
        delivered_total += delivered
        ran_total += ran
    drain_secs = [(d[1] if d[1] is not None else (d[2] if d[2] is not None else end)) - (d[0] or 0.0) for d in rec.drains]
    return {
        "policy": hdr.policy,
        "cluster": hdr.cluster,
        "seed": hdr.seed,
        "days": round(end / 86400.0, 4),
        "capacity_gpus": hdr.capacity_gpus,
        "occupancy": _r((charged + free) / healthy) if healthy else 0.0,
        "allocated_fraction": _r(charged / healthy) if healthy else 0.0,
        "unallocated_fraction": _r(free / healthy) if healthy else 0.0,
        "demand_ratio": _r(sum(rec.demand.hours[:n_hours]) / (hdr.capacity_gpus * end)) if end else 0.0,
        "owed_gpu_hours": _r(owed_total),
        "delivered_gpu_hours": _r(delivered_total),
        "received_gpu_hours": _r(ran_total),
        "delivered_over_owed": _r(delivered_total / owed_total) if owed_total else 1.0,
        "received": _r(ran_total / owed_total) if owed_total else 1.0,
        "teams": teams,
        "teams_at_or_above_95": sum(1 for v in teams.values() if v["ratio"] >= 0.95),
        "teams_below_90": sum(1 for v in teams.values() if v["ratio"] < 0.90),
        "teams_min_ratio": min((v["ratio"] for v in teams.values()), default=1.0),
        "wait": {c: percentiles(v) for c, v in first.items()},
        "pending": {c: percentiles(v) for c, v in pending.items()},
        "preemptions": sum(rec.preemptions_by_rule.values()),
        "preemptions_by_rule": dict(sorted(rec.preemptions_by_rule.items())),
        "lost_gpu_hours": _r(rec.lost_gpu_hours),
        "sessions": {"noticed": rec.notices, "stopped": rec.sessions_stopped,
                     "stopped_without_notice": rec.sessions_stopped_unnoticed},
        "drain_seconds": {
            "p50": _r(percentile(drain_secs, 50)),
            "p90": _r(percentile(drain_secs, 90)),
            "max": _r(max(drain_secs, default=0.0)),
        },
        "drains": len(rec.drains),
        "human_drains": rec.human_drains,
        "jobs": dict(rec.counts),
        "completion": completion(rec),
        "chains": chain_makespans(rec),
        "pipelines": chain_makespans(rec, whole=True),
        "deadlines": deadlines(rec, end),
    }


def completion(rec: Recorder) -> dict[str, float]:
    """Job completion time, submit to final end, of the jobs that ended in the run; the jobs
    that never did (still queued or running at the end, cancelled, rejected) are counted apart
    (``unfinished``), not as a time to the end of the run: a completion time is not censored,
    the waits are (``waits``).  Dependent jobs count from their submit, held time included: the
    time the user waits for the result."""
    ended = rec.completion  # read in place, a chunk at a time (sim/spilled_doubles.py)
    n = len(ended)
    p50, p90 = _ranks(ended, (50, 90))
    return {
        "mean": _r(sum(ended) / n) if n else 0.0,
        "p50": _r(p50),
        "p90": _r(p90),
        "n": n,
        "unfinished": rec.counts["submitted"] - len(ended),
    }


def deadlines(rec: Recorder, end: float) -> dict[str, int]:
    """The jobs with a deadline: ``met`` (ended by it), ``late`` (ended after it), ``unfinished``
    (not ended by ``end`` -- queued, held, running, cancelled or rejected -- and their deadline
    before ``end``: missed whatever happens next) and ``missed`` (late + unfinished); a job not
    ended whose deadline is not past yet is in ``jobs`` only."""
    unfinished = sum(1 for due in rec.deadline_open.values() if due < end)
    return {
        "jobs": rec.deadline_met + rec.deadline_late + len(rec.deadline_open),
        "met": rec.deadline_met,
        "late": rec.deadline_late,
        "unfinished": unfinished,
        "missed": rec.deadline_late + unfinished,
    }


def chain_makespans(rec: Recorder, *, whole: bool = False) -> dict[str, float]:
    """Chain makespan, a chain's first submit to the last end of its members (sim/chains.py),
    of the chains whose every member ended in the run; the others are counted apart
    (``unfinished``: a member still queued, running, cancelled, rejected or not submitted yet).

    ``whole``: only the chains submitted whole, every member at one instant (``pipelines``): a
    script submitting prep, train and eval with ``--dependency=afterok`` does that; a stream of
    follow-up experiments, each submitted while the last one runs, does not (``ai2``'s streams
    span the run, and in a mix their makespans of weeks would drown the pipelines' hours)."""
    chains = [c for c in rec.chains.values() if not whole or c[4] == c[0]]
    spans = [c[1] - c[0] for c in chains if c[2] >= c[3]]
    return {
        "mean": _r(sum(spans) / len(spans)) if spans else 0.0,
        "p50": _r(percentile(spans, 50)),
        "p90": _r(percentile(spans, 90)),
        "n": len(spans),
        "unfinished": len(chains) - len(spans),
    }


def percentile(values: Sequence[float] | SpilledDoubles, q: float) -> float:
    """Nearest-rank percentile (deterministic, no interpolation); 0 for no values."""
    return _rank(values if isinstance(values, SpilledDoubles) else sorted(values), q)


def _rank(s: list[float] | SpilledDoubles, q: float) -> float:
    """``percentile`` of values already sorted, or spilled (whose ``rank`` is their sorted list's)."""
    return _ranks(s, (q,))[0]


def _ranks(s: list[float] | SpilledDoubles, qs: tuple[float, ...]) -> list[float]:
    """The nearest ranks ``qs`` of ``s`` (0 for no values): the one definition of a percentile."""
    n = len(s)
    if not n:
        return [0.0 for _ in qs]
    ks = tuple(max(0, math.ceil(q / 100.0 * n) - 1) for q in qs)
    return s.ranks(ks) if isinstance(s, SpilledDoubles) else [s[k] for k in ks]


def percentiles(values: Sequence[float] | SpilledDoubles) -> dict[str, float]:
    """``{p50, p90, n}`` of a list of waits: the figures every view of a wait shows.  A list is
    sorted once for both; spilled values are ranked without a sorted copy in memory (but for
    their last chunk's)."""
    p50, p90 = _ranks(values if isinstance(values, SpilledDoubles) else sorted(values), (50, 90))
    return {"p50": _r(p50), "p90": _r(p90), "n": len(values)}


def _r(x: float) -> float:
    return round(float(x), 4)
