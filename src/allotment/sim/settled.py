"""What the metrics keep of a job once it is gone: its wait facts in flat arrays, 42 bytes a job.

Why: the waits' percentiles are exact (nearest rank over every job, ``summary.percentile``), so a
run keeps one wait per job to the end; but a whole ``metrics._Job`` object and its id in a dict
for every job ever submitted were about 300 bytes a job, most of a long run's metric memory
(issue 27, item 4; a 1M-job trace, issue 32, item 5).  Once a job has ended, been cancelled or
rejected, nothing it does changes any more, so the ``Recorder`` moves its facts here and drops
the object.

Jobs keep their submit order (``serial``): ``summary.waits`` lists the waits in that order, as
it did when every job stayed in the recorder's dict, so its lists are the same, element for
element.  ``None`` is stored as NaN (no time in a run is NaN).
"""

from __future__ import annotations

import math
from array import array
from typing import Final

NONE: Final = math.nan
LIVE: Final = -1  # ``kind`` of a slot whose job is still in the recorder's dict


_CHUNK: Final = 4096  # slots added at a time: a submit costs a counter, not eight appends


class SettledJobs:
    """One slot per submitted job, by submit order; filled when the job is gone."""

    __slots__ = ("account", "eligible", "first_start", "gpus", "kind", "n", "pending_since", "pending_total",
                 "rejected")

    def __init__(self) -> None:
        self.n = 0  # slots opened; the arrays are longer, by less than a chunk
        self.eligible = array("d")
        self.first_start = array("d")
        self.pending_total = array("d")
        self.pending_since = array("d")
        self.gpus = array("i")  # at most 2^20 (traces/bounds.py)
        self.kind = array("b")  # index into the recorder's kind names; LIVE while the job lives
        self.account = array("i")  # index into the recorder's account names
        self.rejected = array("b")

    def __len__(self) -> int:
        return self.n

    def open(self) -> int:
        """A slot for a job just submitted; its serial number."""
        n = self.n
        if n == len(self.kind):
            for a in (self.eligible, self.first_start, self.pending_total, self.pending_since):
                a.extend(array("d", [NONE]) * _CHUNK)
            self.gpus.extend(array("i", [0]) * _CHUNK)
            self.kind.extend(array("b", [LIVE]) * _CHUNK)
            self.account.extend(array("i", [0]) * _CHUNK)
            self.rejected.extend(array("b", [0]) * _CHUNK)
        self.n = n + 1
        return n

    def settle(self, serial: int, eligible: float | None, first_start: float | None, pending_total: float,
               pending_since: float | None, gpus: int, kind: int, account: int, rejected: bool) -> None:
        """The job of slot ``serial`` is gone; ``kind`` and ``account`` are indices (above)."""
        self.eligible[serial] = NONE if eligible is None else eligible
        self.first_start[serial] = NONE if first_start is None else first_start
        self.pending_total[serial] = pending_total
        self.pending_since[serial] = NONE if pending_since is None else pending_since
        self.gpus[serial] = gpus
        self.kind[serial] = kind
        self.account[serial] = account
        self.rejected[serial] = 1 if rejected else 0


def maybe(x: float) -> float | None:
    """A stored time back as it was given (NaN: None)."""
    return None if x != x else x
