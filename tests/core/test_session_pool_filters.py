"""``SessionPool.off`` (issue 32, item 5): the node filters it keeps, one per set of reserved
nodes, stay bounded however many sets a long run meets; each filter is still the pool's nodes
and the reserved ones closed, and the same object while it is kept (the failed-search memos
compare node sets by identity first)."""

from __future__ import annotations

import tracemalloc

from allotment.compile.interactive import InteractiveClass
from allotment.core.reservation import Unreserved
from allotment.core.session_pool import SessionPool

NODES = [f"n{i:03d}" for i in range(128)]


def _held(k: int) -> frozenset[int]:
    """The ``k``-th of many distinct sets of 4-8 reserved nodes outside the pool (nodes 0-119)."""
    return frozenset((k * 7 + j * 13) % 120 for j in range(4 + k % 5)) | frozenset({k % 120, (k // 120) % 120})


def test_the_pool_keeps_a_bounded_number_of_filters_however_many_reserved_sets_it_meets() -> None:
    sessions = SessionPool(InteractiveClass(pool_nodes=8), NODES, False)
    assert sessions.nodes == frozenset(range(120, 128))
    sets = [_held(k) for k in range(12_000)]
    assert len(set(sets)) > 10_000  # a 1M-job run met about 9,000 (docs/benchmarks.md, "Stop 41")
    filters = [Unreserved(s) for s in sets]
    warm = sessions.off(filters[0])  # the first one made outside the traced part
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for f in filters:
            sessions.off(f)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # kept for ever, these 12,000 filters (each a union of up to 18 nodes) were 8.9 MiB; bounded,
    # what is kept is a few hundred of them
    assert after - before < 1 << 20, f"the pool kept {(after - before) / 2**20:.1f} MiB of filters"
    assert warm.nodes == sets[0] | sessions.nodes


def test_a_kept_filter_is_the_same_object_and_a_remade_one_is_equal() -> None:
    sessions = SessionPool(InteractiveClass(pool_nodes=8), NODES, False)
    first = Unreserved(_held(1))
    got = sessions.off(first)
    assert isinstance(got, Unreserved)
    assert got.nodes == _held(1) | sessions.nodes
    assert sessions.off(Unreserved(_held(1))) is got  # kept: the same object for an equal set
    assert sessions.off(None).nodes == sessions.nodes
    for k in range(2, 20_000):
        sessions.off(Unreserved(_held(k)))
    again = sessions.off(first)
    assert again.nodes == got.nodes  # made again alike after it was let go
    assert all(again(i) == got(i) for i in range(len(NODES)))
