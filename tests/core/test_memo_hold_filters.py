"""The node filters and rooms a round's ``Holds`` keeps per set of binding holds (``_filters``,
``_rooms``, by bit mask; a ``Holds`` is made anew every round and never changes, so the mask is
the whole key) against the definition read off the holds each time: for any holds and any job
(holder or not, ending before or after each hold's start, of a queue ranked before or after each
holder's), the filter ``admit_if_overrun`` returns admits exactly the nodes of no hold that binds
the queue, is not the job's own and would be overrun; ``closed`` is the union of the masked holds'
nodes and the latest of their starts -- asked in any order, each answer once kept."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.reservation import Hold, Holds

N_NODES = 8
holds = st.lists(st.tuples(st.frozensets(st.integers(0, N_NODES - 1), min_size=1, max_size=3),
                           st.sampled_from([10.0, 20.0, 30.0]), st.integers(0, 3)), min_size=1, max_size=4)
asks = st.lists(st.tuples(st.integers(-1, 3), st.sampled_from([5.0, 15.0, 25.0, 35.0]), st.integers(0, 3)),
                min_size=1, max_size=12)


def _admits(holds: Holds, holder: str, end: float, qk: tuple[int, int, str]) -> frozenset[int] | None:
    """The definition: the nodes closed to the job, or None when it may go anywhere."""
    closed: set[int] = set()
    hit = False
    for k, h in enumerate(holds.items):
        if (k == 0 or qk >= h.queue_key) and h.holder != holder and end > h.at:
            closed |= h.nodes
            hit = True
    return frozenset(closed) if hit else None


@settings(max_examples=200, deadline=None)
@given(holds, asks)
def test_the_kept_filters_and_rooms_are_the_definitions(items: list[tuple[frozenset[int], float, int]],
                                                        questions: list[tuple[int, float, int]]) -> None:
    hs = Holds(tuple(Hold(f"h{k}", nodes, at, (0, rank, f"q{rank}")) for k, (nodes, at, rank) in enumerate(items)))
    for _ in range(2):  # computed, then kept
        for who, end, rank in questions:
            holder, qk = f"h{who}", (0, rank, f"q{rank}x")
            got = hs.admit_if_overrun(holder, end, qk)
            want = _admits(hs, holder, end, qk)
            if want is None:
                assert got is None
            else:
                assert got is not None and {i for i in range(N_NODES) if not got(i)} == want
        for mask in range(1, 1 << len(items)):
            nodes, latest = hs.closed(mask)
            chosen = [h for k, h in enumerate(hs.items) if mask >> k & 1]
            assert nodes == frozenset().union(*(h.nodes for h in chosen))
            assert latest == max((h.at for h in chosen), default=-math.inf)
