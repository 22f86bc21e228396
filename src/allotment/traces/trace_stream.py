"""A canonical trace file as a ``JobSource``: checked whole first, then replayed line by line.

The reader reports a bad line only when its pass ends (every problem at once), so nothing may be
simulated from a file before one whole pass found it good.  Passes, each in the reader's memory
(one line, plus 16 bytes a job for the duplicate-id index):

1. check every line (with a ``JobFit``, the config checks too), count the jobs, keep the node
   events and the jobs that depend on others, and the names they depend on;
2. only when needed: keep the jobs named as a dependency that pass 1 did not keep (a
   prerequisite is an ordinary line until a later line names it), and find jobs that no node
   still healthy could ever run (``job_fit.never_run``: only if the trace takes nodes out for good);
3. the replay itself (``FileJobs``): the lines decoded again, without the checks pass 1 made
   (each job line through the one-line fast path, ``job_lines.fast_job``; the few it leaves,
   such as lines with ``depends_on``, through the full checker), which is what makes streaming
   cost about what reading the trace whole did.

The file must not change between the passes: its size, modification time and inode are taken at
pass 1 and compared whenever the replay opens it and when it reaches its end; a change, or a
line the checks now refuse, is a ``TraceError`` (exit 2) and the run's output is not written.

Order: a canonical trace is in submit order (pass 1 refuses a line earlier than the one before
it), so only the jobs of one instant are held, to be handed out by id (``Workload.of``'s order).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.errors import TraceError
from allotment.traces.diagnostics import DiagnosticCollector
from allotment.traces.job_fit import JobFit, never_run, nodes_gone
from allotment.traces.job_lines import checked_job, fast_job
from allotment.traces.line_checker import LineChecker
from allotment.traces.reader import TraceReader
from allotment.traces.source import open_binary


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What pass 1 saw of the file: the replay refuses a file that no longer matches."""

    size: int
    mtime_ns: int
    inode: int

    @staticmethod
    def of(path: Path) -> FileStamp:
        st = path.stat()
        return FileStamp(st.st_size, st.st_mtime_ns, st.st_ino)


def trace_stream(path: str | Path, *, fit: JobFit | None = None, display_name: str | None = None) -> FileJobs:
    """Check ``path`` (raises ``TraceDiagnostics`` with every bad line, ``TraceError`` for jobs
    that can never run) and return its jobs as a source at the first job."""
    name = display_name or str(path)
    p = Path(path)

    def read() -> TraceReader:
        return TraceReader(p, display_name=name, fit=fit)

    stamp = FileStamp.of(p)
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
    return FileJobs(p, name, stamp, ordered, tuple(events), count)


class FileJobs:
    """The jobs of a checked trace file, read as they are asked for (``JobSource``).

    The position is the byte offset of the next line not read, and the jobs read but not handed
    out yet (the rest of one instant, and the first job of the next, read to see that instant
    end).  A fork opens the file again at that offset; the open file belongs to a generator, so
    a source dropped half-way closes it."""

    def __init__(self, path: Path, name: str, stamp: FileStamp, linked: tuple[JobSpec, ...],
                 node_events: tuple[NodeEvent, ...], count: int, *, offset: int = 0,
                 ahead: tuple[JobSpec, ...] = (), after: JobSpec | None = None) -> None:
        self.path = path
        self.name = name
        self.stamp = stamp
        self.linked = linked
        self.node_events = node_events
        self.count = count
        self._offset = offset  # of the first line not read
        self._ahead = list(ahead)  # the rest of the current instant, last one first
        self._after = after  # the first job of the next instant, already read
        self._lines: Iterator[tuple[int, JobSpec]] | None = None
        self._done = False

    def next_job(self) -> JobSpec | None:
        ahead = self._ahead
        if ahead:
            return ahead.pop()
        first = self._after
        if first is None:
            first = self._read()
            if first is None:
                return None
        nxt = self._read()
        if nxt is None or nxt.submit != first.submit:
            self._after = nxt  # the common case: one job an instant
            return first
        group = [first, nxt]
        while (nxt := self._read()) is not None and nxt.submit == first.submit:
            group.append(nxt)
        self._after = nxt
        group.sort(key=_id, reverse=True)  # handed out from the end: by id
        ahead.extend(group)
        return ahead.pop()

    def fork(self) -> FileJobs:
        return FileJobs(self.path, self.name, self.stamp, self.linked, self.node_events, self.count,
                        offset=self._offset, ahead=tuple(self._ahead), after=self._after)

    def rewound(self) -> FileJobs:
        return FileJobs(self.path, self.name, self.stamp, self.linked, self.node_events, self.count)

    def _read(self) -> JobSpec | None:
        if self._done:
            return None
        if self._lines is None:
            self._lines = _job_lines(self.path, self.name, self.stamp, self._offset)
        got = next(self._lines, None)
        if got is None:
            self._done = True
            self._lines = None
            return None
        self._offset, job = got
        return job


def _id(j: JobSpec) -> str:
    return j.id


def _job_lines(path: Path, name: str, stamp: FileStamp, offset: int) -> Iterator[tuple[int, JobSpec]]:
    """``(offset after the line, job)`` for each job line from byte ``offset`` on."""
    if FileStamp.of(path) != stamp:
        raise TraceError(f"{name}: the trace changed while it was being simulated")
    with open_binary(path) as fh:
        if offset:
            fh.seek(offset)
        for raw in fh:
            offset += len(raw)
            try:
                d = json.loads(raw)
            except ValueError:
                if not raw.strip():
                    continue
                raise TraceError(f"{name}: the trace changed while it was being simulated") from None
            kind = d.get("type", "job") if type(d) is dict else None
            if kind == "node" or kind == "header":
                continue
            job = (fast_job(d) or _checked(raw, d, name)) if kind == "job" else None
            if job is None:
                raise TraceError(f"{name}: the trace changed while it was being simulated")
            yield offset, job
    if FileStamp.of(path) != stamp:
        raise TraceError(f"{name}: the trace changed while it was being simulated")


def _checked(raw: bytes, d: dict[str, object], name: str) -> JobSpec | None:
    """A job line the fast path leaves (``depends_on``, unusual fields): the full checker."""
    diags = DiagnosticCollector(name)
    job = checked_job(LineChecker(raw.decode("utf-8", "replace"), 0, diags), d)
    return job if not diags.items else None
