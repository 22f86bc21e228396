"""A canonical trace file as a ``JobSource``: checked whole first, then replayed line by line.

The reader reports a bad line only when its pass ends (every problem at once), so nothing may be
simulated from a file before one whole pass found it good.  Passes, each in the reader's memory
(one line, plus 16 bytes a job for the duplicate-id index):

1. check every line (with a ``JobFit``, the config checks too), count the jobs, keep the node
   events and the jobs that depend on others, and the names they depend on;
2. only when needed: keep the jobs named as a dependency that pass 1 did not keep (a
   prerequisite is an ordinary line until a later line names it), and find jobs that no node
   still healthy could ever run (``job_fit.never_run``: only if the trace takes nodes out for good);
3. the replay itself (``FileJobs``): the lines decoded again (``line_checker.decode_again``),
   without the checks pass 1 made
   (each job line through the one-line fast path, ``job_lines.fast_job``; the few it leaves,
   such as lines with ``depends_on``, through the full checker), which is what makes streaming
   cost about what reading the trace whole did.

The file must not change between the passes: its size, modification time and inode are taken at
pass 1 and compared whenever the replay opens it and when it reaches its end; a change, or a
line the checks now refuse, is a ``TraceError`` (exit 2) and the run's output is not written.

Order: a canonical trace is in submit order (pass 1 refuses a line earlier than the one before
it), so a block of whole instants is enough to hand the jobs out by ``(submit, id)``
(``Workload.of``'s order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.errors import TraceError
from allotment.traces.diagnostics import DiagnosticCollector
from allotment.traces.format import TraceItem
from allotment.traces.job_fit import JobFit, never_run, nodes_gone
from allotment.traces.job_lines import checked_job, fast_job
from allotment.traces.line_checker import DuplicateKey, LineChecker, decode_again
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
        it = _jobs_keeping(read(), missing, found)
        stuck = never_run(fit, it, events) if fit is not None and gone else []
        for _ in it:  # what never_run left unread (it reads nothing when no node is gone)
            pass
        if stuck:
            raise TraceError("\n".join(f"{path}: {why}" for why in stuck))
        linked.update(found)
    # the Workload.of order, so both ways of reading a trace replay it identically
    ordered = tuple(sorted(linked.values(), key=lambda j: (j.submit, j.id)))
    return FileJobs(p, name, stamp, ordered, tuple(events), count)


def _jobs_keeping(items: Iterable[TraceItem], missing: set[str], found: dict[str, JobSpec]) -> Iterator[JobSpec]:
    """The jobs of ``items``, keeping in ``found`` those named in ``missing``.  (A module
    function, not a generator nested in ``trace_stream``: compiled, mypyc's nested generator
    lost its closure.)"""
    for item in items:
        if isinstance(item, JobSpec):
            if item.id in missing:
                found[item.id] = item
            yield item


class FileJobs:
    """The jobs of a checked trace file, read as they are asked for (``JobSource``).

    Read in blocks of whole instants (``BLOCK`` jobs or more: the per-job cost is one decode and one
    ``JobSpec``, not a call chain), each block ordered by ``(submit, id)``.  The position is the
    byte offset where the current block ends and the jobs of that block not handed out yet; a
    fork opens the file again at that offset.  The open file belongs to a generator, so a source
    dropped half-way closes it."""

    def __init__(self, path: Path, name: str, stamp: FileStamp, linked: tuple[JobSpec, ...],
                 node_events: tuple[NodeEvent, ...], count: int, *, offset: int = 0,
                 ahead: tuple[JobSpec, ...] = ()) -> None:
        self.path = path
        self.name = name
        self.stamp = stamp
        self.linked = linked
        self.node_events = node_events
        self.count = count
        self._offset = offset  # where the jobs not read yet start
        self._ahead = list(ahead)  # the block's jobs not handed out, the next one last
        self._blocks: Iterator[tuple[int, list[JobSpec]]] | None = None
        self._done = False

    def next_job(self) -> JobSpec | None:
        ahead = self._ahead
        if ahead:
            return ahead.pop()
        if self._done:
            return None
        if self._blocks is None:
            self._blocks = _blocks(self.path, self.name, self.stamp, self._offset)
        got = next(self._blocks, None)
        if got is None:
            self._done = True
            self._blocks = None
            return None
        self._offset, block = got
        block.reverse()
        self._ahead = block
        return block.pop()

    def fork(self) -> FileJobs:
        return FileJobs(self.path, self.name, self.stamp, self.linked, self.node_events, self.count,
                        offset=self._offset, ahead=tuple(self._ahead))

    def rewound(self) -> FileJobs:
        return FileJobs(self.path, self.name, self.stamp, self.linked, self.node_events, self.count)


BLOCK = 128  # jobs a block holds at least (then up to the end of that instant)


def _id(j: JobSpec) -> str:
    return j.id


def _by_submit_then_id(block: list[JobSpec]) -> list[JobSpec]:
    """A block's jobs, in file order (submit order), with each instant's reordered by id."""
    i, n = 0, len(block)
    while i < n:
        k = i + 1
        while k < n and block[k].submit == block[i].submit:
            k += 1
        if k - i > 1:
            block[i:k] = sorted(block[i:k], key=_id)
        i = k
    return block


def _blocks(path: Path, name: str, stamp: FileStamp, offset: int) -> Iterator[tuple[int, list[JobSpec]]]:
    """``(offset after the block, jobs)`` from byte ``offset`` on: at least ``BLOCK`` jobs a
    block (fewer at the end), and never an instant split between two."""
    changed = f"{name}: the trace changed while it was being simulated"
    if FileStamp.of(path) != stamp:
        raise TraceError(changed)
    block: list[JobSpec] = []
    end = offset  # after the last line of ``block``
    with open_binary(path) as fh:
        if offset:
            fh.seek(offset)
        for raw in fh:
            try:
                text = raw.decode("utf-8")  # pass 1 found it UTF-8; a str decodes faster than bytes
                d = decode_again(text)  # what pass 1 decoded (``line_checker.decode_line``)
            except (ValueError, DuplicateKey):
                if not raw.strip():
                    offset += len(raw)
                    continue
                raise TraceError(changed) from None
            kind = d.get("type", "job") if type(d) is dict else None
            if kind == "node" or kind == "header":
                offset += len(raw)
                continue
            job = (fast_job(d) or _checked(text, d, name)) if kind == "job" else None
            if job is None:
                raise TraceError(changed)
            if len(block) >= BLOCK and job.submit != block[-1].submit:
                yield end, _by_submit_then_id(block)
                block = []
            block.append(job)
            offset += len(raw)
            end = offset
    if FileStamp.of(path) != stamp:
        raise TraceError(changed)
    if block:
        yield end, _by_submit_then_id(block)


def _checked(text: str, d: dict[str, object], name: str) -> JobSpec | None:
    """A job line the fast path leaves (``depends_on``, unusual fields): the full checker."""
    diags = DiagnosticCollector(name)
    job = checked_job(LineChecker(text, 0, diags), d)
    return job if not diags.items else None
