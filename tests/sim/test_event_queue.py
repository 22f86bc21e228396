"""The run's event queue pops what ``heapq`` on ``(t, kind, seq, payload)`` tuples pops
(sim.event_queue), and a queue pickles and deep-copies (a paused run does both)."""

from __future__ import annotations

import copy
import heapq
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.sim.event_queue import Due, pop, push

# a time, a kind: few values of each, so that ties are common; pushes and pops interleaved
step = st.one_of(st.none(), st.tuples(st.sampled_from([0.0, 1.0, 2.5, 1e9, float("inf")]), st.integers(-1, 4)))


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=60))
def test_the_queue_pops_in_heapq_order(steps: list[tuple[float, int] | None]) -> None:
    heap: list[Due] = []
    ref: list[tuple[float, int, int, str]] = []
    for seq, s in enumerate(steps):
        if s is None:
            if ref:
                e = pop(heap)
                assert (e.t, e.kind, e.seq, e.payload) == heapq.heappop(ref)
            continue
        t, kind = s
        push(heap, Due(t, kind, seq, f"p{seq}"))
        heapq.heappush(ref, (t, kind, seq, f"p{seq}"))
        assert (heap[0].t, heap[0].kind, heap[0].seq) == ref[0][:3]
    while ref:
        e = pop(heap)
        assert (e.t, e.kind, e.seq, e.payload) == heapq.heappop(ref)
    assert not heap


def test_an_entry_pickles_and_deep_copies_with_every_field() -> None:
    e = Due(3.5, 2, 7, ("j1", 1.0))
    for got in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e), copy.copy(e)):
        assert (got.t, got.kind, got.seq, got.payload) == (3.5, 2, 7, ("j1", 1.0))
