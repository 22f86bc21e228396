"""An append-only scratch file: what a reader or a run keeps of every job, out of memory.

Why: the summary's percentiles are exact (nearest rank over every job), so a run keeps one wait
per job to its end, and a trace's reader keeps every id to find duplicates anywhere in the file;
in memory both grew with the trace, not with the jobs alive (issue 32, item 5: 0.18 KiB a job
at 1M jobs).  Written here in chunks, they cost the process a chunk at a time.  The file is an unnamed temporary file (made by ``tempfile.mkstemp`` and unlinked at once,
so a killed run leaves nothing behind) in the usual temporary directory (``TMPDIR``).

Chunks are read back whole or a page at a time (``read``): a sorted run searched by bisection is
read a page per count (``sim.spilled_doubles``), not mapped, so the pages a search touched do not
stay in the process's memory (a map of them did: docs/benchmarks.md, "Stop 41").

A deep copy (``sim.switch`` copies a paused run, its recorder with it) gets a file of its own
with the same bytes: the two runs then append at the same offsets without meeting.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array


class Spill:
    """Chunks of typed arrays appended to one temporary file; each addressed by its offset."""

    __slots__ = ("__weakref__", "_fd", "_size")

    def __init__(self) -> None:
        self._fd = -1  # opened on the first chunk: a short run never makes one
        self._size = 0

    def _open(self) -> int:
        fd, path = tempfile.mkstemp(prefix="allot-spill-")
        os.unlink(path)  # no name: the space is freed when the descriptor closes, or the process dies
        weakref.finalize(self, os.close, fd)
        self._fd = fd
        return fd

    def __deepcopy__(self, memo: dict[int, object]) -> Spill:
        out = Spill()
        if self._fd >= 0:
            fd = out._open()
            at = 0
            while at < self._size:
                block = os.pread(self._fd, min(1 << 20, self._size - at), at)
                out._fd = fd
                out.write_bytes(block)
                at += len(block)
        return out

    def __reduce__(self) -> tuple[object, ...]:
        """Not picklable: the descriptor is this process's (a copy would share or lose the file)."""
        raise TypeError("a Spill holds this process's temporary file: deep-copy it, do not pickle it")

    def write(self, a: array) -> int:  # type: ignore[type-arg]
        """Append ``a``'s bytes; their offset in the file."""
        return self.write_bytes(a.tobytes())

    def write_bytes(self, raw: bytes) -> int:
        """Append ``raw``; its offset in the file."""
        fd = self._fd if self._fd >= 0 else self._open()
        at = self._size
        data = memoryview(raw)
        done = 0
        while done < len(data):  # a regular file takes it all at once, but nothing promises that
            done += os.pwrite(fd, data[done:], at + done)
        self._size = at + len(data)
        return at

    def read(self, typecode: str, at: int, n: int) -> array:  # type: ignore[type-arg]
        """The ``n`` items of type ``typecode`` written at ``at``."""
        out = array(typecode)
        if n:
            out.frombytes(os.pread(self._fd, n * out.itemsize, at))
        return out
