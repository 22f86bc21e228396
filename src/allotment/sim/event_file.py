"""An event log written to its file while the run goes, and read back one event at a time.

A 30-day run emits hundreds of thousands of events.  Holding them until the run ends, to write
them then, made the log most of a run's peak memory (issue 27); ``EventFile`` writes each line
as the simulator emits it (``simulate(on_event=...)``), so the log costs no memory that grows
with the run.

The header comes first in the file (docs/trace-format.md, "Event log") but is complete only
when the run stops (its ``end``), so the lines go to a spool file beside the target, and
``finish`` writes the header and then the spool into the target's own temporary file, renamed
into place: a reader never sees a log without its header or a half-written one
(``atomic_file``).  The bytes are exactly ``encode_log``'s: the same ``dumps_line`` per line."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

from allotment.atomic_file import commit, discard, in_place, open_temp, temp_beside
from allotment.sim.events import Event, RunHeader, dumps_line, event_from_json

_CHUNK = 1 << 20  # bytes copied at a time from the spool
BATCH_LINES = 4096  # lines encoded before they go to the spool in one write


class EventFile:
    """Call it with each event; ``finish(header)`` puts the log at each of ``paths`` (one
    spool, however many copies: ``--events FILE`` and the one ``--save`` copies in).  Leaving
    its ``with`` block by an exception (or ``abort``) removes every file it made."""

    def __init__(self, *paths: Path) -> None:
        assert paths, "an EventFile writes at least one file"
        self.paths = paths
        # the spool is scratch: in the system's temporary folder when the first path is a
        # device written in place (atomic_file.in_place), else beside it
        self._spool_path = _scratch(paths[0])
        self._spool = self._spool_path.open("xb")
        self._lines: list[str] = []

    def __call__(self, e: Event) -> None:
        self._lines.append(dumps_line(e.to_json()))
        if len(self._lines) >= BATCH_LINES:
            self._flush()

    def _flush(self) -> None:
        self._spool.write("".join(self._lines).encode("utf-8"))
        self._lines.clear()

    def finish(self, header: RunHeader) -> None:
        """Write each path: the header line, then every event in the order emitted."""
        try:
            self._flush()
            self._spool.close()
            for path in self.paths:
                self._write(path, header)
        finally:
            self._spool_path.unlink(missing_ok=True)

    def _write(self, path: Path, header: RunHeader) -> None:
        tmp, out = open_temp(path)
        try:
            with out, self._spool_path.open("rb") as spool:
                # FILE.gz is compressed, as every output of the tool written by line is
                # (traces.writer.AtomicWriter: no name, no time in the gzip header)
                sink: gzip.GzipFile | IO[bytes] = out
                if path.suffix == ".gz":
                    sink = gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0)
                with sink:
                    sink.write(dumps_line(header.to_json()).encode("utf-8"))
                    shutil.copyfileobj(spool, sink, _CHUNK)
            commit(tmp, path)
        except BaseException:
            discard(tmp, path)
            raise

    def abort(self) -> None:
        self._spool.close()
        self._spool_path.unlink(missing_ok=True)

    def __enter__(self) -> EventFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.abort()


def read_events(path: Path) -> Iterator[Event]:
    """The events of a log file in order, one at a time (the header line skipped), for a reader
    that must not hold the whole run: the run directory's fair-share samples."""
    with path.open(encoding="utf-8") as f:
        next(f, None)
        for line in f:
            if line.strip():
                yield event_from_json(json.loads(line))


def _scratch(path: Path) -> Path:
    if in_place(path):
        return temp_beside(Path(tempfile.gettempdir()) / "allotment-events")
    return temp_beside(path)
