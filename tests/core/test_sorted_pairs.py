"""The native searches of sorted pairs place as ``bisect``/``insort`` do (core.sorted_pairs).

Compiled (mypyc), a function taking a pair takes it unboxed: no float of the pair placed is then
an object of the list, which only a NaN's comparison can tell (tests/core/test_candidates.py);
the reference is then given the pair boxed afresh, as the callers' pairs are built afresh."""

from __future__ import annotations

import math
from bisect import bisect_left, insort

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.sorted_pairs import drop_named, drop_numbered, insort_named, insort_numbered

COMPILED = not hasattr(insort_named, "__code__")
TIMES = st.sampled_from([-math.inf, -1.5, -0.0, 0.0, 2.0, math.inf, math.nan])
named = st.tuples(TIMES, st.sampled_from(["a", "b", "c"]))
numbered = st.tuples(TIMES, st.integers(0, 3))


def _passed(k: tuple[float, object]) -> tuple[float, object]:
    return (k[0] * 1.0, k[1]) if COMPILED else k


@settings(max_examples=400, deadline=None)
@given(st.lists(named, max_size=12), named, st.booleans())
def test_a_named_pair_goes_where_insort_puts_it(keys: list[tuple[float, str]], k: tuple[float, str],
                                               sort: bool) -> None:
    """Sorted or not (a NaN leaves no list sorted), the NaN the same object as one of the
    list's or not: the same list after an insertion, by value and order."""
    if sort:
        keys.sort()
    want = list(keys)
    insort(want, _passed(k))
    insort_named(keys, k)
    assert repr(keys) == repr(want)


@settings(max_examples=400, deadline=None)
@given(st.lists(numbered, max_size=12), numbered, st.booleans())
def test_a_numbered_pair_goes_where_insort_puts_it(keys: list[tuple[float, int]], k: tuple[float, int],
                                                  sort: bool) -> None:
    if sort:
        keys.sort()
    want = list(keys)
    insort(want, _passed(k))
    insort_numbered(keys, k)
    assert repr(keys) == repr(want)


@settings(max_examples=400, deadline=None)
@given(st.lists(named, min_size=1, max_size=12), st.data())
def test_dropping_a_named_pair_takes_what_bisect_left_finds(keys: list[tuple[float, str]], data: st.DataObject) -> None:
    keys.sort()
    k = data.draw(st.sampled_from(keys) | named)
    want = list(keys)
    i = bisect_left(want, _passed(k))
    if i >= len(want):
        return  # past the end: both raise IndexError (not a use the callers make)
    del want[i]
    drop_named(keys, k)
    assert repr(keys) == repr(want)


@settings(max_examples=400, deadline=None)
@given(st.lists(numbered, min_size=1, max_size=12), st.data())
def test_dropping_a_numbered_pair_takes_what_bisect_left_finds(keys: list[tuple[float, int]],
                                                              data: st.DataObject) -> None:
    keys.sort()
    k = data.draw(st.sampled_from(keys) | numbered)
    want = list(keys)
    i = bisect_left(want, _passed(k))
    if i >= len(want):
        return
    del want[i]
    drop_numbered(keys, k)
    assert repr(keys) == repr(want)
