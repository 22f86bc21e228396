"""The protections' heap pops what ``heapq`` pops (core.pair_heap)."""

from __future__ import annotations

import heapq
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.pair_heap import heappop, heappush

# few times and names, so that ties (and equal pairs) are common; pushes and pops interleaved
pair = st.tuples(st.sampled_from([-0.0, 0.0, 1.0, 2.5, 1e9, math.inf]), st.sampled_from(["a", "b", "c", "j10"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), pair), max_size=60))
def test_the_heap_pops_in_heapq_order(steps: list[tuple[float, str] | None]) -> None:
    heap: list[tuple[float, str]] = []
    ref: list[tuple[float, str]] = []
    for s in steps:
        if s is None:
            if ref:
                assert heappop(heap) == heapq.heappop(ref)
        else:
            heappush(heap, s)
            heapq.heappush(ref, s)
            assert heap[0] == ref[0]
    while ref:
        assert heappop(heap) == heapq.heappop(ref)
    assert not heap
