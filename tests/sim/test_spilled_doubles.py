"""``SpilledDoubles`` (issue 32, item 5): values spilled a chunk at a time read back in the order
appended, and ``rank`` is ``sorted(values)[k]`` exactly, the sign of a zero included."""

from __future__ import annotations

import copy
import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.sim.spilled_doubles import SpilledDoubles
from allotment.spill import Spill

_values = st.lists(st.one_of(st.floats(allow_nan=False), st.sampled_from((0.0, -0.0, 1.0, math.inf))), max_size=60)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@settings(max_examples=300, deadline=None)
@given(values=_values, chunk=st.integers(1, 7))
def test_spilled_values_rank_as_their_sorted_list_and_iterate_in_order(values: list[float], chunk: int) -> None:
    s = SpilledDoubles(Spill(), chunk=chunk)
    for x in values:
        s.append(x)
    assert len(s) == len(values)
    assert [_bits(x) for x in s] == [_bits(x) for x in values]
    expected = sorted(values)
    assert [_bits(x) for x in s.ranks(tuple(range(len(values))))] == [_bits(x) for x in expected]


def test_a_full_chunk_leaves_memory_for_the_spill() -> None:
    s = SpilledDoubles(Spill(), chunk=4)
    for x in (5.0, 3.0, 9.0, 1.0, 7.0, 2.0):
        s.append(x)
    assert s.in_memory() == 2  # the tail; the first four are in the file
    assert s.rank(0) == 1.0 and s.rank(5) == 9.0
    assert s.in_memory() == 2  # ranking reads the file, it does not load it


def test_two_lists_share_one_spill_and_keep_their_own_values() -> None:
    spill = Spill()
    a, b = SpilledDoubles(spill, chunk=2), SpilledDoubles(spill, chunk=2)
    for i in range(7):
        a.append(float(i))
        b.append(float(-i))
    assert list(a) == [float(i) for i in range(7)]
    assert list(b) == [float(-i) for i in range(7)]
    assert a.rank(3) == 3.0 and b.rank(0) == -6.0


def test_a_deep_copy_spills_to_a_file_of_its_own() -> None:
    """``sim.switch`` deep-copies a paused run: the copy and the run go on appending apart."""
    s = SpilledDoubles(Spill(), chunk=2)
    for x in (4.0, 1.0, 3.0):
        s.append(x)
    c = copy.deepcopy(s)
    for x in (0.5, 9.0, 7.0):
        s.append(x)
    for x in (8.0, 6.0, 2.0):
        c.append(x)
    assert list(s) == [4.0, 1.0, 3.0, 0.5, 9.0, 7.0]
    assert list(c) == [4.0, 1.0, 3.0, 8.0, 6.0, 2.0]
    assert (s.rank(0), c.rank(0), s.rank(5), c.rank(5)) == (0.5, 1.0, 9.0, 8.0)


def test_a_copy_made_after_a_rank_ranks_its_own_values() -> None:
    """The copy does not take the sorted runs a ``rank`` made (``__deepcopy__``, written for the
    compiled class): it sorts its own chunks again, and both go on ranking exactly."""
    s = SpilledDoubles(Spill(), chunk=2)
    for x in (4.0, 1.0, 3.0, -0.0, 0.0):
        s.append(x)
    assert [str(s.rank(k)) for k in range(5)] == ["-0.0", "0.0", "1.0", "3.0", "4.0"]
    c = copy.deepcopy(s)
    s.append(-1.0)
    c.append(5.0)
    assert [str(s.rank(k)) for k in range(6)] == [str(x) for x in sorted([4.0, 1.0, 3.0, -0.0, 0.0, -1.0])]
    assert [str(c.rank(k)) for k in range(6)] == [str(x) for x in sorted([4.0, 1.0, 3.0, -0.0, 0.0, 5.0])]


class _ReadsCounted(Spill):
    """A real spill that remembers the most bytes one read (or map) exposed since ``reset``."""

    def __init__(self) -> None:
        super().__init__()
        self.most = 0

    def read(self, typecode: str, at: int, n: int):  # type: ignore[no-untyped-def]
        out = super().read(typecode, at, n)
        self.most = max(self.most, len(out) * out.itemsize)
        return out

    def view(self, at: int, n: int):  # type: ignore[no-untyped-def]  # a memory map of a whole run (before stop 41)
        self.most = max(self.most, 8 * n)
        return super().view(at, n)  # type: ignore[misc]


def test_a_rank_reads_a_run_a_page_at_a_time_not_the_whole_run() -> None:
    """What a summary's percentile holds of the spill at once is one page, not every page its
    search touched (mapped, those were the longest list's 8 bytes a job: docs/benchmarks.md,
    "Stop 41"); and the ranks stay ``sorted``'s, the runs several pages long."""
    spill = _ReadsCounted()
    s = SpilledDoubles(spill, chunk=8192)
    values = [float((i * 7919) % 5003) - 2500.0 for i in range(50_000)] + [0.0, -0.0] * 300
    for x in values:
        s.append(x)
    want = sorted(values)
    ks = (0, 1, 599, 2500 + 300, len(values) // 2, len(values) * 9 // 10, len(values) - 1)
    assert [_bits(x) for x in s.ranks(ks)] == [_bits(want[k]) for k in ks]  # sorts the runs: whole chunks
    spill.most = 0
    again = (3, len(values) // 3, len(values) * 5 // 10 + 17)
    assert [_bits(x) for x in s.ranks(again)] == [_bits(want[k]) for k in again]
    assert spill.most <= 4096, f"one read exposed {spill.most} bytes of a run"
