"""A binary heap of (time, job) pairs, sifted by comparing native fields (``heapq``'s steps).

Why: under mypyc ``heapq.heappush``/``heappop`` are generic calls whose sift compares boxed
tuples element by element (an equality then a ``<`` per field, through the float's and the
string's rich comparisons).  The pairs are totally ordered by value, so the pops come out the
same whatever the comparisons' cost: the least pair first, and equal pairs are equal in every
field.  The times here are never NaN (``ClusterState.start`` pushes only a finite protection).

Entries move through an untyped alias of the list (``raw``): compiled, a read from a list typed
``list[tuple[float, str]]`` unboxes the pair, and a write boxes it as a new tuple, which made
every move of the sift an allocation (a pop cost more than ``heapq``'s); only the comparisons
read the pairs typed.
"""

from __future__ import annotations

from typing import cast


def heappush(heap: list[tuple[float, str]], item: tuple[float, str]) -> None:
    """``heapq.heappush(heap, item)``."""
    heap.append(item)
    _sift_down(heap, 0, len(heap) - 1)


def heappop(heap: list[tuple[float, str]]) -> tuple[float, str]:
    """``heapq.heappop(heap)``: the least pair, taken out (IndexError on an empty heap)."""
    raw = cast("list[object]", heap)
    last = raw.pop()
    if not raw:
        return cast("tuple[float, str]", last)
    top = raw[0]
    raw[0] = last
    _sift_up(heap, 0)
    return cast("tuple[float, str]", top)


def _sift_down(heap: list[tuple[float, str]], start: int, pos: int) -> None:
    """``heapq._siftdown``."""
    raw = cast("list[object]", heap)
    item = raw[pos]
    t, name = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        pt, pname = heap[parent_pos]
        if t < pt or (t == pt and name < pname):
            raw[pos] = raw[parent_pos]
            pos = parent_pos
            continue
        break
    raw[pos] = item


def _sift_up(heap: list[tuple[float, str]], pos: int) -> None:
    """``heapq._siftup``."""
    raw = cast("list[object]", heap)
    end = len(heap)
    start = pos
    item = raw[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end:
            ct, cname = heap[child]
            rt, rname = heap[right]
            if not (ct < rt or (ct == rt and cname < rname)):
                child = right
        raw[pos] = raw[child]
        pos = child
        child = 2 * pos + 1
    raw[pos] = item
    _sift_down(heap, start, pos)
