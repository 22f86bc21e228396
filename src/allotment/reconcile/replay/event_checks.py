"""Whether an event log read back (``allot replay --from-events FILE``) can be a replay of the
trace it is compared with, on the cluster it is compared on: every line that cannot be is a
``file:line:col`` error, all at once, exit 2, before any simulation (issue 32, item 9).

``event_lines`` checks each line alone (types, bounds); these are the checks across lines and
against the trace and config.  A job not in the trace was a ``KeyError`` traceback; an end
before any start, a start twice, more GPUs than the cluster has and an unknown account were
accepted and compared, so the fidelity table judged a log no replay could have written.
Lines are taken in the log's time order (``events.sort_key``), as the metrics read them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from allotment.reconcile.replay.event_lines import parse_numbered
from allotment.reconcile.replay.events import Event, sort_key
from allotment.traces.diagnostics import DiagnosticCollector, TooManyErrors

_NODE_EVENTS = ("drain", "resume")


def read_consistent_events(
    path: Path, *, jobs: Collection[str], accounts: Collection[str], capacity_gpus: int
) -> list[Event]:
    """The events of ``path`` in time order, or TraceDiagnostics naming every line that the
    replay of ``jobs`` on a cluster of ``capacity_gpus`` charging ``accounts`` cannot write."""
    numbered = sorted(parse_numbered(path, Event), key=lambda p: (sort_key(p[1]), p[0]))
    diags = DiagnosticCollector(str(path))
    try:
        _check(numbered, diags, jobs, accounts, capacity_gpus)
        stopped = False
    except TooManyErrors:
        stopped = True
    diags.raise_if_any(stopped_early=stopped)
    return [e for _, e in numbered]


def _check(
    numbered: Sequence[tuple[int, Event]],
    diags: DiagnosticCollector,
    jobs: Collection[str],
    accounts: Collection[str],
    capacity_gpus: int,
) -> None:
    running: set[str] = set()
    for n, e in numbered:
        if e.account is not None and e.account not in accounts:
            diags.add(n, 1, f"unknown account {e.account!r}: no budget leaf on this cluster")
        if e.gpus is not None and e.gpus > capacity_gpus:
            diags.add(n, 1, f"{e.gpus:,} GPUs is more than the cluster's {capacity_gpus:,}")
        if e.event in _NODE_EVENTS or e.job is None:
            continue
        if e.job not in jobs:
            diags.add(n, 1, f"job {e.job!r} is not in the trace")
            continue
        if e.event == "start":
            if e.job in running:
                diags.add(n, 1, f"job {e.job!r} starts again without a preempt or end since")
            running.add(e.job)
        elif e.event in ("end", "preempt"):
            if e.job not in running:
                diags.add(n, 1, f"{e.event} of job {e.job!r}, which is not running (no start before)")
            running.discard(e.job)
