"""What the metrics keep of a job once it is gone: its wait facts, 42 bytes a job, in chunks of
4,096 jobs that leave memory for the run's ``Spill`` once every job in them has gone.

Why: the waits' percentiles are exact (nearest rank over every job, ``summary.percentile``), so a
run keeps one wait per job to the end; but a whole ``metrics._Job`` object and its id in a dict
for every job ever submitted were about 300 bytes a job, most of a long run's metric memory
(issue 27, item 4; a 1M-job trace, issue 32, item 5).  Once a job has ended, been cancelled or
rejected, nothing it does changes any more, so the ``Recorder`` moves its facts here and drops
the object.  Flat arrays still grew with the trace (42 bytes a job); a chunk whose jobs have all
gone is written out and read back only by ``chunks``, so what stays in memory is the chunks
holding a job still alive: at most one per live job, whatever the trace's length.

Jobs keep their submit order (``serial``): ``summary.waits`` lists the waits in that order, as
it did when every job stayed in the recorder's dict, so its lists are the same, element for
element.  ``None`` is stored as NaN (no time in a run is NaN).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from typing import Final

from allotment.spill import Spill

NONE: Final = math.nan
LIVE: Final = -1  # ``kind`` of a slot whose job is still in the recorder's dict
DROPPED: Final = -2  # ``kind`` of a slot whose job was replaced by a later submit of its id: no job

CHUNK: Final = 4096  # slots opened at a time: a submit costs a counter, not eight appends
_FIELDS: Final = (("eligible", "d"), ("first_start", "d"), ("pending_total", "d"), ("pending_since", "d"),
                  ("gpus", "i"), ("kind", "b"), ("account", "i"), ("rejected", "b"))


class SettledChunk:
    """The facts of ``CHUNK`` consecutive slots, one array a field; ``live``: slots still LIVE."""

    __slots__ = ("account", "eligible", "first_start", "gpus", "kind", "live", "pending_since", "pending_total",
                 "rejected")

    def __init__(self) -> None:
        self.eligible = array("d", [NONE]) * CHUNK
        self.first_start = array("d", [NONE]) * CHUNK
        self.pending_total = array("d", [NONE]) * CHUNK
        self.pending_since = array("d", [NONE]) * CHUNK
        self.gpus = array("i", [0]) * CHUNK  # at most 2^20 (traces/bounds.py)
        self.kind = array("b", [LIVE]) * CHUNK  # index into the recorder's kind names, LIVE or DROPPED
        self.account = array("i", [0]) * CHUNK  # index into the recorder's account names
        self.rejected = array("b", [0]) * CHUNK
        self.live = 0


class SettledJobs:
    """One slot per submitted job, by submit order; filled when the job is gone."""

    __slots__ = ("_held", "_spill", "_written", "n")

    def __init__(self, spill: Spill | None = None) -> None:
        self.n = 0  # slots opened
        self._spill = spill if spill is not None else Spill()
        self._held: dict[int, SettledChunk] = {}  # chunk number -> chunk with a slot still LIVE, or the last
        self._written: dict[int, tuple[int, ...]] = {}  # chunk number -> each field's offset in the spill

    def __len__(self) -> int:
        return self.n

    def held(self) -> int:
        """Chunks in memory: those with a job still alive, and the one being filled."""
        return len(self._held)

    def open(self) -> int:
        """A slot for a job just submitted; its serial number."""
        n = self.n
        c = n // CHUNK  # not divmod: compiled, a generic call and a tuple (serials are >= 0)
        i = n - c * CHUNK
        if i == 0:
            self._held[c] = SettledChunk()
            if c:
                self._write_if_gone(c - 1)
        self._held[c].live += 1
        self.n = n + 1
        return n

    def settle(self, serial: int, eligible: float | None, first_start: float | None, pending_total: float,
               pending_since: float | None, gpus: int, kind: int, account: int, rejected: bool) -> None:
        """The job of slot ``serial`` is gone; ``kind`` and ``account`` are indices (above)."""
        c = serial // CHUNK
        i = serial - c * CHUNK
        ch = self._held[c]
        ch.eligible[i] = NONE if eligible is None else eligible
        ch.first_start[i] = NONE if first_start is None else first_start
        ch.pending_total[i] = pending_total
        ch.pending_since[i] = NONE if pending_since is None else pending_since
        ch.gpus[i] = gpus
        ch.kind[i] = kind
        ch.account[i] = account
        ch.rejected[i] = 1 if rejected else 0
        ch.live -= 1
        self._write_if_gone(c)

    def drop(self, serial: int) -> None:
        """The job of slot ``serial`` was replaced by a later submit of the same id: no job now."""
        c = serial // CHUNK
        i = serial - c * CHUNK
        ch = self._held[c]
        ch.kind[i] = DROPPED
        ch.live -= 1
        self._write_if_gone(c)

    def chunks(self) -> Iterator[tuple[int, SettledChunk]]:
        """Every chunk opened, in submit order, with its first serial; written ones read back."""
        for c in range((self.n + CHUNK - 1) // CHUNK):
            ch = self._held.get(c)
            if ch is None:
                ch = SettledChunk()
                for (name, code), at in zip(_FIELDS, self._written[c], strict=True):
                    setattr(ch, name, self._spill.read(code, at, CHUNK))
            yield c * CHUNK, ch

    def _write_if_gone(self, c: int) -> None:
        """Chunk ``c`` leaves memory once it is full and every job in it has gone."""
        ch = self._held.get(c)
        if ch is not None and ch.live == 0 and self.n >= (c + 1) * CHUNK:
            self._written[c] = tuple(self._spill.write(getattr(ch, name)) for name, _ in _FIELDS)
            del self._held[c]


def maybe(x: float) -> float | None:
    """A stored time back as it was given (NaN: None)."""
    return None if x != x else x
