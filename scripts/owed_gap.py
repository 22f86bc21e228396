"""Where the hour-capped delivered/owed shortfall comes from: an attribution from the event log.

Usage: python scripts/owed_gap.py EVENTS.jsonl [--repo .] [--step 60] [--json OUT]

For every team and hour, the shortfall is ``owed_h - min(ran_h, owed_h)`` (docs/metrics.md, the
definition in ``sim/summary.team_hours``).  It is explained from the state the scheduler left
after each pass, sampled every ``--step`` seconds and rebuilt from the log alone (jobs pending and
running, where, protected or not, allocated or not; in-service GPUs; window usage through
``core.usage.UsageLedger`` and the reclaim measure through ``core.fairshare``: the core's own rules).

At each sample, a team below ``min(allocation, demand)`` by ``g`` GPUs has ``g`` GPUs of
*instantaneous deficit*.  An ideal scheduler that follows Ai2's contract would fill it with the
team's pending jobs, smallest first, each from the cheapest GPUs that make it fit on real nodes:

- ``a_big``   no pending job fits in the team's room below its allocation (``allocation -
  running``): the deficit is demand only a job bigger than the room can use, which means borrowing.
  Split further: ``a_huge``, the part whose smallest such job is bigger than the team's whole
  allocation; ``a_big:X``, the class X below of the GPUs that smallest job would have needed;
  ``a_big_job:G``, that job's size (at most G GPUs);
- ``f_free``  free in-service GPUs would hold the job, yet it did not start (a reservation for a
  gang, the backfill rule, the visit order);
- ``c_unalloc`` free GPUs plus unallocated work (preemptible at once by any allocated job);
- ``c_reclaim`` ... plus unprotected work of teams running above what they are owed whose reclaim
  measure is higher by the hysteresis (the reclaim rule allows it: a scheduler gap if it did not);
- ``d_order`` ... plus unprotected work of teams above what they are owed but *not* served more
  over the window (the 7-day order forbids the reclaim: payback of the requester's own borrowing);
- ``b_protected`` ... plus protected work (within its minimum runtime) of teams above what they are owed;
- ``f_other`` only by taking GPUs from teams at or below their allocation (fragmentation).

GPUs taken for one job are not offered to the next, donors give at most what they run above what
they are owed, and deficit teams are served most under-served first.  The sampled categories of
an hour are then scaled to the hour's shortfall: ``e_hour`` is the shortfall the hour's totals
show beyond the sampled instantaneous deficit (demand and allocation that do not coincide within
the hour), and an instantaneous deficit made up by borrowing later in the same hour does not count.
This is an upper bound on what each rule could recover: smallest jobs first, no queue order, and
a donor may give part of a job (the scheduler evicts whole jobs).

Two other readings are printed beside the metric, never instead of it (docs/metrics.md): a team's
unallocated running counted as delivered, and demand counting only jobs no bigger than the team's
allocation (the ``a_huge`` demand left out).  Both are sampled at ``--step``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from allotment.compile.compiler import compile_repo
from allotment.core.context import build_context
from allotment.core.epoch import epoch_of
from allotment.core.fairshare import reclaim_measure, served_more
from allotment.core.usage import UsageLedger
from allotment.sim.anchor import DEFAULT_T0
from allotment.sim.events import Event, RunHeader, read_log
from allotment.sim.metrics import Recorder
from allotment.sim.summary import HOUR, team_hours

CATS = ("a_big", "f_free", "c_unalloc", "c_reclaim", "d_order", "b_protected", "f_other", "e_hour")
# the per-node GPU classes a deficit team may take, cheapest first
FREE, UNALLOC, RECLAIM, ORDER, PROTECTED = range(5)
CLASS_CAT = ("f_free", "c_unalloc", "c_reclaim", "d_order", "b_protected")
# a_big split by what its smallest job would need, and the part whose job exceeds the allocation
BIG = (*(f"a_big:{c}" for c in (*CLASS_CAT, "f_other")), "a_huge")
# a_big split by the GPUs of that smallest job (8, 16, ... 256 or more)
SIZES = tuple(f"a_big_job:{g}" for g in (8, 16, 32, 64, 128, 256))
# the part of c_unalloc + c_reclaim while a job bigger than the room also waited (often the queue's
# first blocked candidate, the only one the scheduler lets preempt)
BEHIND = ("c_behind_big",)
SAMPLED = CATS[:-1] + BIG + SIZES + BEHIND
ALL = CATS + BIG + SIZES + BEHIND


@dataclass(frozen=True, slots=True)
class Knobs:
    lookback_s: float
    hysteresis: float
    period_s: float


@dataclass(slots=True)
class _Run:
    account: str
    gpus: int
    placement: tuple[tuple[int, int], ...]  # (node index, GPUs)
    allocated: bool
    budgeted: bool
    protected_until: float
    rate: float  # reference GPUs charged


@dataclass(slots=True)
class _State:
    """The cluster as the log says it is, after every event up to now."""

    header: RunHeader
    names: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    cap: Any = None  # np.ndarray of node GPUs
    used: Any = None
    healthy: Any = None
    min_rt: dict[str, float] = field(default_factory=dict)
    gpus: dict[str, int] = field(default_factory=dict)
    account: dict[str, str] = field(default_factory=dict)
    pending: dict[str, dict[str, int]] = field(default_factory=dict)  # team -> budgeted job -> GPUs
    running: dict[str, _Run] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = sorted(self.header.nodes)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.cap = np.array([self.header.nodes[n] for n in self.names], dtype=float)
        self.used = np.zeros(len(self.names))
        self.healthy = np.ones(len(self.names), dtype=bool)
        self.pending = {t: {} for t in self.header.teams}

    def apply(self, e: Event, ledger: UsageLedger) -> None:
        jid = e.job or ""
        if e.event == "submit":
            self.min_rt[jid] = e.min_runtime or 0.0
            self.gpus[jid] = e.gpus or 0
            self.account[jid] = e.account or ""
            if not e.held:
                self._queue(jid)
        elif e.event == "eligible":
            self._queue(jid)
        elif e.event == "start":
            self.pending.get(self.account[jid], {}).pop(jid, None)
            pl = tuple((self.index[n], g) for n, g in zip(e.nodes or (), e.node_gpus or (), strict=True))
            mr = self.min_rt[jid]
            r = _Run(self.account[jid], self.gpus[jid], pl, bool(e.allocated), mr > 0,
                     e.t + mr if e.allocated else e.t, e.charged_gpus or 0.0)
            self.running[jid] = r
            for i, g in pl:
                self.used[i] += g
            if r.rate:
                ledger.start(r.account, e.t, r.rate)
        elif e.event in ("preempt", "end"):
            r = self.running.pop(jid)
            for i, g in r.placement:
                self.used[i] -= g
            if r.rate:
                ledger.stop(r.account, e.t, r.rate)
            if e.event == "preempt" and e.requeued:
                self._queue(jid)
        elif e.event == "drain" and e.state == "unhealthy":
            self.healthy[self.index[e.node or ""]] = False
        elif e.event == "resume":
            self.healthy[self.index[e.node or ""]] = True

    def _queue(self, jid: str) -> None:
        if self.min_rt[jid] > 0 and self.account[jid] in self.pending:
            self.pending[self.account[jid]][jid] = self.gpus[jid]


def _classes(st: _State, t: float, team: str, left: dict[str, float], better: set[str]) -> Any:
    """GPUs per (class, node) ``team`` may take, and per donor team (``donor[a]``: its node GPUs by
    class RECLAIM..PROTECTED), for the fit test and for taking at most a donor's excess."""
    n = len(st.names)
    cls = np.zeros((5, n))
    cls[FREE] = np.where(st.healthy, st.cap - st.used, 0.0)
    donors: dict[str, Any] = {}
    for r in st.running.values():
        if not r.allocated:
            k = UNALLOC
        elif r.account == team or left.get(r.account, 0.0) <= 1e-9:
            continue
        elif r.protected_until > t:
            k = PROTECTED
        else:
            k = RECLAIM if r.account in better else ORDER
        for i, g in r.placement:
            cls[k, i] += g
            if k >= RECLAIM:
                donors.setdefault(r.account, np.zeros((5, n)))[k, i] += g
    return cls, donors


def _take(cls: Any, donors: dict[str, Any], left: dict[str, float], nodes: Any, per: int, k: int) -> None:
    """Take ``per`` GPUs on each of ``nodes``, cheapest class first, up to class ``k``."""
    for i in nodes:
        need = float(per)
        for c in range(k + 1):
            if need <= 0:
                break
            got = min(need, cls[c, i])
            if c >= RECLAIM and got > 0:  # from donors, each at most its excess
                rest = got
                for a, arr in donors.items():
                    take = min(rest, arr[c, i], left.get(a, 0.0))
                    arr[c, i] -= take
                    left[a] = left.get(a, 0.0) - take
                    rest -= take
                got -= rest
            cls[c, i] -= got
            need -= got


def _fit(cls: Any, donors: dict[str, Any], left: dict[str, float], gpus: int, gpn: int) -> str:
    """Place one job on the cheapest GPUs that hold it; the category of the costliest class used."""
    nodes_n, per = max(1, math.ceil(gpus / gpn)), min(gpus, gpn)
    cum = np.cumsum(cls, axis=0)
    for k in range(5):
        ok = np.nonzero(cum[k] >= per)[0]
        if len(ok) >= nodes_n:
            need_k = np.argmax(cum[:, ok] >= per, axis=0)  # the nodes needing the cheapest classes
            _take(cls, donors, left, ok[np.argsort(need_k, kind="stable")[:nodes_n]], per, k)
            return CLASS_CAT[k]
    return "f_other"


def _fill(cls: Any, donors: dict[str, Any], left: dict[str, float], jobs: list[int], room: float,
          gap: float, gpn: int, alloc: float) -> dict[str, float]:
    """Attribute ``gap`` GPUs of one team's deficit (see the module docstring)."""
    out = dict.fromkeys(SAMPLED, 0.0)
    big = []
    has_big = bool(jobs) and max(jobs) > room + 1e-9
    for gpus in sorted(jobs):
        if gap <= 1e-9:
            break
        if gpus > room + 1e-9:
            big.append(gpus)
            continue
        part = min(float(gpus), gap)
        cat = _fit(cls, donors, left, gpus, gpn)
        out[cat] += part
        if has_big and cat in ("c_unalloc", "c_reclaim"):
            out["c_behind_big"] += part
        gap -= part
        room -= gpus
    if gap > 1e-9 and big:  # only a job bigger than the room could fill it: what would it need?
        out["a_big"] += gap
        out["a_big:" + _fit(cls, donors, left, big[0], gpn)] += gap
        if big[0] > alloc:
            out["a_huge"] += gap
        size = next((k for k in SIZES if big[0] <= int(k.split(":")[1])), SIZES[-1])
        out[size] += gap
    return out


def _grid(events: list[Event], end: float, step: float) -> Iterator[tuple[float, list[Event]]]:
    """Each sample time with the events at or before it (a pass at t follows every event at t)."""
    i, n = 0, len(events)
    t = 0.0
    while t < end:
        batch = []
        while i < n and events[i].t <= t:
            batch.append(events[i])
            i += 1
        yield t, batch
        t += step


def attribute(header: RunHeader, events: list[Event], knobs: Knobs, step: float) -> dict[str, Any]:
    st = _State(header)
    ledger = UsageLedger(knobs.lookback_s)
    teams = list(header.teams)
    ent, ceil = header.entitlement_gpus, header.ceilings
    capacity = float(header.capacity_gpus)
    gpn = int(max(header.nodes.values()))
    n_hours = max(1, math.ceil(header.end / HOUR))
    sampled = {tm: np.zeros((n_hours, len(SAMPLED))) for tm in teams}
    alt_unalloc = {tm: np.zeros(n_hours) for tm in teams}
    fit_demand = {tm: np.zeros(n_hours) for tm in teams}  # demand of jobs no bigger than the allocation
    for t, batch in _grid(events, header.end, step):
        for e in batch:
            st.apply(e, ledger)
        h = int(t // HOUR)
        off = np.where(st.healthy, 0.0, st.cap - st.used).sum()
        in_service = capacity - off
        healthy_total = float(st.cap[st.healthy].sum())
        run = dict.fromkeys(teams, 0.0)
        alloc_run = dict.fromkeys(teams, 0.0)
        for r in st.running.values():
            if r.account in run:
                if r.budgeted:
                    run[r.account] += r.gpus
                else:
                    alt_unalloc[r.account][h] += r.gpus * step
                if r.allocated:
                    alloc_run[r.account] += r.gpus
        owed_s = {tm: ent.get(tm, 0.0) * healthy_total / capacity for tm in teams}  # the scheduler's owed
        epoch = epoch_of(t, knobs.period_s)
        measure = {tm: reclaim_measure(ledger.window_gpu_hours(tm, epoch), owed_s[tm]) for tm in teams}
        over = {tm: alloc_run[tm] - owed_s[tm] for tm in teams if alloc_run[tm] - owed_s[tm] > 0}
        short = []
        for tm in teams:
            alloc = min(ent.get(tm, 0.0) * in_service / capacity, ceil.get(tm, math.inf))
            pend = st.pending[tm]
            gap = min(alloc, run[tm] + sum(pend.values())) - run[tm]
            fit_demand[tm][h] += (run[tm] + sum(g for g in pend.values() if g <= alloc)) * step
            if gap > 1e-9:
                short.append((measure[tm], tm, alloc, gap))
        left = dict(over)
        cls_shared: Any = None
        for m_t, tm, alloc, gap in sorted(short):
            better = {a for a in over if served_more(measure[a], m_t, knobs.hysteresis)}
            cls, donors = _classes(st, t, tm, left, better)
            if cls_shared is not None:  # what earlier deficit teams took is gone
                cls[FREE], cls[UNALLOC] = cls_shared
            got = _fill(cls, donors, left, list(st.pending[tm].values()), alloc - run[tm], gap, gpn, alloc)
            cls_shared = (cls[FREE].copy(), cls[UNALLOC].copy())
            sampled[tm][h] += np.array([got[c] for c in SAMPLED]) * step
    return _hours(header, events, sampled, alt_unalloc, fit_demand)


def _hours(header: RunHeader, events: list[Event], sampled: dict[str, Any], alt: dict[str, Any],
           fit: dict[str, Any]) -> dict[str, Any]:
    """Scale each hour's sampled deficit to its shortfall (``team_hours``, the metric itself)."""
    rec = Recorder(header)
    for e in events:
        rec.consume(e)
    per_team: dict[str, dict[str, float]] = {}
    owed_all = delivered_all = alt_all = fit_owed_all = fit_del_all = 0.0
    for tm in header.teams:
        hours = team_hours(rec, tm)
        acc = dict.fromkeys(ALL, 0.0)
        owed = delivered = alt_del = fit_owed = fit_del = 0.0
        for h, th in enumerate(hours):
            owed += th.owed
            delivered += th.delivered
            alt_del += min(th.ran + alt[tm][h], th.owed)
            o = min(th.owed, float(fit[tm][h]))
            fit_owed += o
            fit_del += min(th.ran, o)
            short = th.owed - th.delivered
            if short <= 1e-9:
                continue
            d = sampled[tm][h]
            total = float(d[: len(CATS) - 1].sum())  # the a_big split is inside a_big
            scale = min(1.0, short / total) if total > 0 else 0.0
            for c, v in zip(SAMPLED, d, strict=True):
                acc[c] += v * scale
            acc["e_hour"] += max(0.0, short - total)
        per_team[tm] = {"owed": owed / HOUR, "delivered": delivered / HOUR,
                        "ratio": delivered / owed if owed else 1.0,
                        "ratio_counting_unallocated": alt_del / owed if owed else 1.0,
                        "ratio_fitting_demand": fit_del / fit_owed if fit_owed else 1.0,
                        **{c: v / HOUR for c, v in acc.items()}}
        owed_all += owed
        delivered_all += delivered
        alt_all += alt_del
        fit_owed_all += fit_owed
        fit_del_all += fit_del
    total = {c: sum(v[c] for v in per_team.values()) for c in ALL}
    return {"seed": header.seed, "owed": owed_all / HOUR, "delivered": delivered_all / HOUR,
            "delivered_over_owed": delivered_all / owed_all if owed_all else 1.0,
            "counting_unallocated": alt_all / owed_all if owed_all else 1.0,
            "fitting_demand": fit_del_all / fit_owed_all if fit_owed_all else 1.0,
            "fitting_demand_teams_95": sum(v["ratio_fitting_demand"] >= 0.95 for v in per_team.values()),
            "fitting_demand_min": min(v["ratio_fitting_demand"] for v in per_team.values()),
            "shortfall": total, "teams": per_team}


def render(res: dict[str, Any]) -> str:
    short = res["owed"] - res["delivered"]
    lines = [f"seed {res['seed']}: owed {res['owed']:,.0f} GPU-h, delivered (hour-capped) {res['delivered']:,.0f} "
             f"= {res['delivered_over_owed']:.3f}; shortfall {short:,.0f} GPU-h "
             f"(counting a team's unallocated running as delivered: {res['counting_unallocated']:.3f})",
             f"sensitivity, not the metric: demand counting only jobs no bigger than the team's allocation gives "
             f"{res['fitting_demand']:.3f}, {res['fitting_demand_teams_95']} teams >= 0.95, lowest "
             f"{res['fitting_demand_min']:.3f}", ""]
    lines.append("| team | owed | ratio | " + " | ".join(CATS) + " |")
    lines.append("|---|---:|---:|" + "---:|" * len(CATS))
    for tm, v in sorted(res["teams"].items()):
        lines.append(f"| {tm} | {v['owed']:,.0f} | {v['ratio']:.3f} | " + " | ".join(f"{v[c]:,.0f}" for c in CATS) + " |")
    tot = res["shortfall"]
    lines.append("| **all** | " + f"{res['owed']:,.0f} | {res['delivered_over_owed']:.3f} | "
                 + " | ".join(f"{tot[c]:,.0f} ({100 * tot[c] / short:.0f}%)" if short else "0" for c in CATS) + " |")
    big = tot["a_big"]
    lines += ["", "a_big split by what its smallest job (bigger than the room) would have needed:", "",
              "| " + " | ".join(BIG) + " |", "|" + "---:|" * len(BIG),
              "| " + " | ".join(f"{tot[c]:,.0f} ({100 * tot[c] / big:.0f}%)" if big else "0" for c in BIG) + " |",
              "", "a_big by the GPUs of that smallest job (256: 256 or more):", "",
              "| " + " | ".join(SIZES) + " |", "|" + "---:|" * len(SIZES),
              "| " + " | ".join(f"{tot[c]:,.0f} ({100 * tot[c] / big:.0f}%)" if big else "0" for c in SIZES) + " |",
              "", f"c_unalloc + c_reclaim while a job bigger than the room also waited: {tot['c_behind_big']:,.0f} GPU-h "
              f"of {tot['c_unalloc'] + tot['c_reclaim']:,.0f}"]
    return "\n".join(lines)


def knobs_of(repo: Path, cluster: str) -> Knobs:
    """The policy's window, hysteresis and epoch for ``cluster`` (t = 0 at the default anchor)."""
    ctx = build_context(compile_repo(repo, DEFAULT_T0), cluster)
    p = ctx.policy
    return Knobs(float(p.lookback_s), float(p.reclaim_hysteresis), float(p.fairshare_period_s))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("events", type=Path)
    ap.add_argument("--repo", type=Path, default=Path("."), help="the config the run used (policy knobs)")
    ap.add_argument("--step", type=float, default=60.0, help="sampling step, seconds (default 60)")
    ap.add_argument("--json", type=Path, help="also write the attribution as JSON")
    a = ap.parse_args(argv)
    header, events = read_log(a.events)
    res = attribute(header, events, knobs_of(a.repo, header.cluster), a.step)
    print(render(res))
    if a.json:
        a.json.write_text(json.dumps(res, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
