"""A list of doubles that holds one chunk in memory and the rest in a ``Spill``, with exact
nearest-rank order statistics.

Why: the summary's waits and completion times are one double a job, and their percentiles are
exact; no exact streaming quantile exists, so every value is kept, but on disk (issue 32,
item 5).  Values are read back in the order they were appended (``__iter__``: sums stay the
same, element for element) and ``rank(k)`` is **exactly** ``sorted(values)[k]``, the same
object value and sign, without holding the values in memory:

1. each full chunk is written as it was appended; at the first ``rank`` each is read once,
   sorted and written back as a sorted run (one chunk in memory at a time), and the first value
   of each of its pages (``PAGE`` doubles) stays in memory as the run's fences;
2. the value v of rank k is found by bisecting the doubles' order (as 64-bit keys, ``_key``)
   for the least v with at least k + 1 values <= v, counting each run with ``bisect``: on its
   fences, then on the one page they point to, read from the file (``_FileRun``).  A memory map
   of the runs did the same, but every page a search touched counted in the process's memory
   until the list was done: at 1M jobs the longest list's 7.6 MiB, the peak of
   ``simulate --trace`` growing 8 bytes a job (docs/benchmarks.md, "Stop 41");
3. values equal to v can still differ (0.0 and -0.0): ``sorted`` is stable, so they come in
   the order appended, which is run by run and, within a run, the run's own stable order.

NaN is not a value here (no wait or time is NaN; ``sorted`` leaves NaN's order undefined).
"""

from __future__ import annotations

import copy
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any, Final

from allotment.spill import Spill

CHUNK: Final = 8192  # doubles in memory per list (64 KiB): about 90 lists in a summary of 40 teams

_SIGN: Final = 1 << 63
_MASK: Final = (1 << 64) - 1


def _key(x: float) -> int:
    """An integer in the doubles' order (-0.0 just before 0.0)."""
    u: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    return (~u & _MASK) if u & _SIGN else u | _SIGN


def _value(k: int) -> float:
    """The double of key ``k`` (``_key``'s inverse)."""
    u = k & ~_SIGN if k & _SIGN else ~k & _MASK
    (x,) = struct.unpack("<d", struct.pack("<Q", u))
    return float(x)


class SpilledDoubles:
    """Append-only doubles: ``len``, iteration in order, and ``rank`` as ``sorted(...)[k]``."""

    __slots__ = ("_chunk", "_chunks", "_n", "_runs", "_spill", "_tail")

    def __init__(self, spill: Spill, chunk: int = CHUNK) -> None:
        self._spill = spill
        self._chunk = chunk
        self._tail = array("d")  # the last, partial chunk
        self._chunks: list[int] = []  # offsets of the full chunks, in order appended
        self._runs: list[_FileRun] | None = None  # their sorted copies (made by ``rank``)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __deepcopy__(self, memo: dict[int, Any]) -> SpilledDoubles:
        """A copy that appends apart (``sim.switch`` deep-copies a paused run), on the copy of
        the spill (one per spill, through ``memo``).  Written here because compiled, the class
        has no reduction ``copy`` can use (copyreg would call it without its spill).  The sorted
        runs are not copied: the copy's first ``rank`` sorts its chunks again, to the same runs."""
        out = SpilledDoubles(copy.deepcopy(self._spill, memo), self._chunk)
        out._tail = array("d", self._tail)
        out._chunks = list(self._chunks)
        out._n = self._n
        return out

    def in_memory(self) -> int:
        """Values held in memory: the last, partial chunk."""
        return len(self._tail)

    def append(self, x: float) -> None:
        t = self._tail
        t.append(x)
        self._n += 1
        if len(t) >= self._chunk:
            self._chunks.append(self._spill.write(t))
            self._tail = array("d")
            self._runs = None

    def __iter__(self) -> Iterator[float]:
        for at in self._chunks:
            yield from self._spill.read("d", at, self._chunk)
        yield from list(self._tail)  # a copy: appending while iterating does not reach here

    def rank(self, k: int) -> float:
        """``sorted(self)[k]``, exactly (0 <= k < len)."""
        return self.ranks((k,))[0]

    def ranks(self, ks: tuple[int, ...]) -> list[float]:
        """``[sorted(self)[k] for k in ks]``, exactly, the tail sorted once for all of them."""
        for k in ks:
            if not 0 <= k < self._n:
                raise IndexError(f"rank {k} of {self._n} values")
        tail = sorted(self._tail)
        if not self._chunks:
            return [tail[k] for k in ks]
        runs: list[_FileRun | _ListRun] = [*self._sorted_runs(), _ListRun(tail)]
        return [_select(runs, k) for k in ks]

    def _sorted_runs(self) -> list[_FileRun]:
        if self._runs is None:
            self._runs = []
            for at in self._chunks:
                run = array("d", sorted(self._spill.read("d", at, self._chunk)))
                self._runs.append(_FileRun(self._spill, self._spill.write(run), run))
        return self._runs


PAGE: Final = 512  # doubles a fence stands for (4 KiB of a run): what one count reads of the file


class _FileRun:
    """A sorted run in the spill, counted through its fences (the first value of each page, in
    memory: 16 bytes a page) and the one page they point to (read when counted)."""

    __slots__ = ("_at", "_fences", "_n", "_spill")

    def __init__(self, spill: Spill, at: int, run: array[float]) -> None:
        self._spill, self._at, self._n = spill, at, len(run)
        self._fences = list(run[::PAGE])

    def __len__(self) -> int:
        return self._n

    def _page(self, p: int) -> array[float]:
        return self._spill.read("d", self._at + 8 * p * PAGE, min(PAGE, self._n - p * PAGE))

    def at(self, i: int) -> float:
        return self._page(i // PAGE)[i % PAGE]

    def first(self) -> float:
        return self._fences[0]

    def last(self) -> float:
        return self.at(self._n - 1)

    def count_le(self, v: float) -> int:
        """``bisect_right(run, v)``: the last page starting at or below v holds the boundary."""
        p = bisect_right(self._fences, v) - 1
        return 0 if p < 0 else p * PAGE + bisect_right(self._page(p), v)

    def count_lt(self, v: float) -> int:
        """``bisect_left(run, v)``: the last page starting below v holds the boundary."""
        p = bisect_left(self._fences, v) - 1
        return 0 if p < 0 else p * PAGE + bisect_left(self._page(p), v)


class _ListRun:
    """The sorted tail, in memory, with ``_FileRun``'s counts."""

    __slots__ = ("_values",)

    def __init__(self, values: list[float]) -> None:
        self._values = values

    def __len__(self) -> int:
        return len(self._values)

    def at(self, i: int) -> float:
        return self._values[i]

    def first(self) -> float:
        return self._values[0]

    def last(self) -> float:
        return self._values[-1]

    def count_le(self, v: float) -> int:
        return bisect_right(self._values, v)

    def count_lt(self, v: float) -> int:
        return bisect_left(self._values, v)


def _select(runs: list[_FileRun | _ListRun], k: int) -> float:
    """``sorted(chain(*runs))[k]`` where each run is sorted (stably) and the runs are in the order
    their values were appended: steps 2 and 3 of the module docstring."""
    # 2. the least key whose value has more than k values at or below it
    lo = min(_key(r.first()) for r in runs if len(r))
    hi = max(_key(r.last()) for r in runs if len(r))
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(r.count_le(_value(mid)) for r in runs) > k:
            hi = mid
        else:
            lo = mid + 1
    v = _value(lo)
    # 3. among the values equal to v, the (k - below)-th in the order appended
    m = k - sum(r.count_lt(v) for r in runs)
    for r in runs:
        i = r.count_lt(v)
        same = r.count_le(v) - i
        if m < same:
            return float(r.at(i + m))
        m -= same
    raise AssertionError("unreachable: rank counted more values than the runs hold")
