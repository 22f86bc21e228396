"""Real against simulated: the fidelity table and its targets (issue 15, docs/fidelity.md).

From two event logs of one trace (a replay on the cluster, a simulation of it):

* per 5-minute window: occupancy (GPU-seconds running / healthy GPU-seconds) and each team's
  delivered share (its allocated GPU-seconds / all teams' allocated GPU-seconds); target:
  relative error within 10%, the denominator never below ``SHARE_FLOOR`` (a team that barely
  ran in a window would otherwise turn a few GPU-seconds into a huge relative error);
* per job kind: wait (first start - submit) p50 and p90; target: within 25% or 5 s, whichever
  is larger;
* for information only: whole-run occupancy, preemptions, run span.

Windows cover [0, the earlier of the two ends); the last one is as long as what is left of it.
After the earlier end only one side still runs: a window there would score nothing but the
seconds by which that side outlasted the other (a 2 s window at 0% against 100% occupancy), so
it is dropped (issue 30); waits still count to the later end, a job never started on one side
waiting until it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from allotment.reconcile.replay.events import Event, sort_key
from allotment.sim.metrics import percentile

WINDOW_S = 300.0
OCC_TOL = SHARE_TOL = 0.10
SHARE_FLOOR = 0.05
WAIT_TOL, WAIT_ABS_S = 0.25, 5.0


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    real: float
    sim: float
    error: float  # relative (or seconds for waits within the absolute allowance)
    target: str
    ok: bool | None  # None: information only


@dataclass(frozen=True, slots=True)
class _Usage:
    busy: list[float]  # GPU-seconds running per window
    healthy: list[float]  # healthy GPU-seconds per window
    team: dict[str, list[float]]  # allocated GPU-seconds per team per window
    end: float
    waits: dict[str, list[float]]  # kind -> waits
    preemptions: int


def _usage(
    events: Sequence[Event],
    capacity: int,
    node_gpus: Mapping[str, int],
    end: float,
    windows_end: float,
) -> _Usage:
    n = max(1, int(-(-windows_end // WINDOW_S)))
    busy, healthy = [0.0] * n, [0.0] * n
    team: dict[str, list[float]] = {}
    submit: dict[str, tuple[float, str]] = {}
    waits: dict[str, list[float]] = {}
    started: set[str] = set()
    running: dict[str, Event] = {}
    down: dict[str, float] = {}

    def spread(into: list[float], a: float, b: float, gpus: float) -> None:
        for w in range(int(a // WINDOW_S), min(n, int(-(-b // WINDOW_S)))):
            lo, hi = max(a, w * WINDOW_S), min(b, (w + 1) * WINDOW_S, windows_end)
            if hi > lo:
                into[w] += gpus * (hi - lo)

    spread(healthy, 0.0, windows_end, float(capacity))
    preempts = 0
    for e in sorted(events, key=sort_key):
        job = e.job or ""
        if e.event == "submit":
            submit[job] = (e.t, e.kind or "batch")
        elif e.event == "start":
            running[job] = e
            if job not in started and job in submit:
                started.add(job)
                t0, kind = submit[job]
                waits.setdefault(kind, []).append(e.t - t0)
                waits.setdefault("all", []).append(e.t - t0)
        elif e.event in ("end", "preempt") and job in running:
            s = running.pop(job)
            preempts += e.event == "preempt"
            spread(busy, s.t, e.t, float(s.gpus or 0))
            if s.allocated:
                spread(team.setdefault(s.account or "", [0.0] * n), s.t, e.t, float(s.gpus or 0))
        elif e.event == "drain" and e.node:
            down.setdefault(e.node, e.t)
        elif e.event == "resume" and e.node in down:
            spread(healthy, down.pop(e.node or ""), e.t, -float(node_gpus.get(e.node or "", 0)))
    for node, since in down.items():
        spread(healthy, since, windows_end, -float(node_gpus.get(node, 0)))
    for job, (t0, kind) in submit.items():  # never started: waited until the end (censored)
        if job not in started:
            waits.setdefault(kind, []).append(end - t0)
            waits.setdefault("all", []).append(end - t0)
    return _Usage(busy, healthy, team, end, waits, preempts)


def compare(
    real: Sequence[Event], sim: Sequence[Event], *, capacity: int, node_gpus: Mapping[str, int]
) -> list[Row]:
    end = max((e.t for e in (*real, *sim)), default=0.0)
    both = min(max((e.t for e in real), default=0.0), max((e.t for e in sim), default=0.0))
    r = _usage(real, capacity, node_gpus, end, both)
    s = _usage(sim, capacity, node_gpus, end, both)
    rows: list[Row] = []
    for w in range(len(r.busy)):
        label = f"{int(w * WINDOW_S)}-{int(min(both, (w + 1) * WINDOW_S))}s"
        ro, so = _ratio(r.busy[w], r.healthy[w]), _ratio(s.busy[w], s.healthy[w])
        err = abs(ro - so) / so if so else (0.0 if not ro else 1.0)
        rows.append(Row(f"occupancy {label}", ro, so, err, "<= 10%", err <= OCC_TOL))
        rt, st = sum(x[w] for x in r.team.values()), sum(x[w] for x in s.team.values())
        for t in sorted(set(r.team) | set(s.team)):
            rs = _ratio(r.team.get(t, [0.0] * len(r.busy))[w], rt)
            ss = _ratio(s.team.get(t, [0.0] * len(s.busy))[w], st)
            err = abs(rs - ss) / max(ss, SHARE_FLOOR)
            rows.append(Row(f"share {t} {label}", rs, ss, err, "<= 10%", err <= SHARE_TOL))
    for kind in sorted(set(r.waits) | set(s.waits)):
        for q in (50, 90):
            rv, sv = percentile(r.waits.get(kind, []), q), percentile(s.waits.get(kind, []), q)
            allowed = max(WAIT_TOL * sv, WAIT_ABS_S)
            err = abs(rv - sv) / sv if sv else 0.0
            ok = abs(rv - sv) <= allowed
            rows.append(Row(f"wait p{q} {kind} (s)", rv, sv, err, "25% or 5s", ok))
    ro, so = _ratio(sum(r.busy), sum(r.healthy)), _ratio(sum(s.busy), sum(s.healthy))
    rows.append(Row("occupancy whole run", ro, so, _rel(ro, so), "info", None))
    rows.append(
        Row(
            "preemptions",
            r.preemptions,
            s.preemptions,
            _rel(r.preemptions, s.preemptions),
            "info",
            None,
        )
    )
    return rows


def render(rows: Iterable[Row]) -> str:
    lines = [f"{'metric':<34} {'real':>9} {'sim':>9} {'rel.err':>8}  {'target':<9} ok"]
    for x in rows:
        mark = "-" if x.ok is None else ("yes" if x.ok else "NO")
        lines.append(
            f"{x.metric:<34} {x.real:>9.3f} {x.sim:>9.3f} {x.error:>8.1%}  {x.target:<9} {mark}"
        )
    return "\n".join(lines)


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _rel(a: float, b: float) -> float:
    return abs(a - b) / b if b else 0.0
