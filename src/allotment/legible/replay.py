"""The state of a saved run at any moment, rebuilt from its event log alone (no re-run):
which jobs run where, which wait and since when, which nodes are drained.

Everything the views say about "at TIME" comes from here, so they all agree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from allotment.legible.rundir import Event, RunDir

HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Interval:
    """One run of one job on its nodes; ``end`` None while it still runs."""

    job: str
    account: str
    gpus: int
    nodes: tuple[str, ...]
    allocated: bool
    start: float
    end: float | None = None
    preempted: bool = False  # the run ended in a preemption (the red edge)


@dataclass(slots=True)
class Moment:
    """The run at time ``t``: running intervals, pending jobs (job -> first submit time),
    drained nodes (node -> since), work each job did before its current run, and which jobs
    finished or were rejected."""

    t: float
    running: dict[str, Interval] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)
    drained: dict[str, float] = field(default_factory=dict)
    progress_s: dict[str, float] = field(default_factory=dict)  # work done before the current run
    done: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)


def intervals(events: Iterable[Event], until: float) -> list[Interval]:
    """Every run, in start order; runs still going at ``until`` end there (end None kept)."""
    open_: dict[str, Interval] = {}
    out: list[Interval] = []
    for e in events:
        if e.t > until:
            break
        if e.event == "start":
            open_[e.job] = Interval(e.job, e.account, e.gpus, e.nodes, e.allocated, e.t)
        elif e.event in ("end", "preempt") and e.job in open_:
            iv = open_.pop(e.job)
            out.append(_closed(iv, e.t, e.event == "preempt"))
    out.extend(open_.values())
    out.sort(key=lambda iv: (iv.start, iv.job))
    return out


def _closed(iv: Interval, t: float, preempted: bool) -> Interval:
    return Interval(iv.job, iv.account, iv.gpus, iv.nodes, iv.allocated, iv.start, t, preempted)


def moment(run: RunDir, t: float) -> Moment:
    """Apply every event with time <= ``t`` in log order."""
    r = Replay(Moment(t))
    for e in run.events:
        if e.t > t:
            break
        r.apply(e)
    return r.m


@dataclass(slots=True)
class Replay:
    """The one rule for how an event changes a ``Moment``: ``moment`` folds the log through it
    from the start, the moment index (``moment_index``) from its nearest checkpoint.
    ``submitted`` is each job's first submit time, which a preempted job waits since."""

    m: Moment
    submitted: dict[str, float] = field(default_factory=dict)

    def apply(self, e: Event) -> None:
        m = self.m
        if e.event == "submit":
            self.submitted.setdefault(e.job, e.t)
            m.pending[e.job] = self.submitted[e.job]
        elif e.event == "start":
            m.pending.pop(e.job, None)
            m.running[e.job] = Interval(e.job, e.account, e.gpus, e.nodes, e.allocated, e.t)
        elif e.event == "preempt":
            iv = m.running.pop(e.job, None)
            if iv is not None:
                lost_s = e.lost_gpu_hours * HOUR / max(1, e.gpus)
                m.progress_s[e.job] = m.progress_s.get(e.job, 0.0) + max(0.0, e.t - iv.start - lost_s)
            m.pending[e.job] = self.submitted.get(e.job, e.t)
        elif e.event == "end":
            m.running.pop(e.job, None)
            m.pending.pop(e.job, None)
            m.done.add(e.job)
        elif e.event == "reject":
            m.pending.pop(e.job, None)
            m.rejected.add(e.job)
        elif e.event == "drain":
            m.drained.setdefault(e.node, e.t)
        elif e.event == "resume":
            m.drained.pop(e.node, None)


def gpus_by_account(ivs: Iterable[Interval], *, allocated: bool | None = None) -> dict[str, int]:
    out: dict[str, int] = {}
    for iv in ivs:
        if allocated is None or iv.allocated == allocated:
            out[iv.account] = out.get(iv.account, 0) + iv.gpus
    return out
