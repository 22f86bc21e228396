"""A canonical trace file as a ``JobStream``: checked whole first, then replayed line by line.

The reader reports a bad line only when its pass ends (every problem at once), so nothing may be
simulated from a file before one whole pass found it good.  Passes, each in the reader's memory
(one line, plus 16 bytes a job for the duplicate-id index):

1. check every line (with a ``JobFit``, the config checks too), count the jobs, keep the node
   events and the jobs that depend on others, and the names they depend on;
2. only when needed: keep the jobs named as a dependency that pass 1 did not keep (a
   prerequisite is an ordinary line until a later line names it), and find jobs that no node
   still healthy could ever run (``job_fit.never_run``: only if the trace takes nodes out for good);
3. the replay itself (``JobStream.jobs``), which reads the file again with the same checks.

The file must not change between the passes; if it does, pass 3's checks report it at the end
of the run like any bad line (exit 2), and the run's output is not written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.errors import TraceError
from allotment.traces.job_fit import JobFit, never_run, nodes_gone
from allotment.traces.job_stream import JobStream, in_submit_order
from allotment.traces.reader import TraceReader


def trace_stream(path: str | Path, *, fit: JobFit | None = None, display_name: str | None = None) -> JobStream:
    """Check ``path`` (raises ``TraceDiagnostics`` with every bad line, ``TraceError`` for jobs
    that can never run) and return its jobs as a stream."""
    name = display_name or str(path)

    def read() -> TraceReader:
        return TraceReader(path, display_name=name, fit=fit)

    # 1.
    count = 0
    linked: dict[str, JobSpec] = {}
    named: set[str] = set()
    events: list[NodeEvent] = []
    for item in read():
        if isinstance(item, JobSpec):
            count += 1
            if item.depends_on:
                linked[item.id] = item
                named.update(item.depends_on)
        else:
            events.append(item)
    events.sort(key=lambda e: (e.time, e.node, e.state))
    # 2.
    missing = named - linked.keys()
    gone = fit is not None and bool(nodes_gone(fit, events))
    if missing or gone:
        found: dict[str, JobSpec] = {}

        def jobs() -> Iterator[JobSpec]:
            for item in read():
                if isinstance(item, JobSpec):
                    if item.id in missing:
                        found[item.id] = item
                    yield item

        it = jobs()
        stuck = never_run(fit, it, events) if fit is not None and gone else []
        for _ in it:  # what never_run left unread (it reads nothing when no node is gone)
            pass
        if stuck:
            raise TraceError("\n".join(f"{path}: {why}" for why in stuck))
        linked.update(found)
    # the Workload.of order, so both ways of reading a trace replay it identically
    ordered = tuple(sorted(linked.values(), key=lambda j: (j.submit, j.id)))

    def replay() -> Iterator[JobSpec]:
        return in_submit_order(item for item in read() if isinstance(item, JobSpec))

    return JobStream(replay, ordered, tuple(events), count)
