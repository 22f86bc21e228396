"""A binary heap of (time, job) pairs, sifted by comparing native fields (``heapq``'s steps).

Why: under mypyc ``heapq.heappush``/``heappop`` are generic calls whose sift compares boxed
tuples element by element (an equality then a ``<`` per field, through the float's and the
string's rich comparisons).  The pairs are totally ordered by value, so the pops come out the
same whatever the comparisons' cost: the least pair first, and equal pairs are equal in every
field.  The times here are never NaN (``ClusterState.start`` pushes only a finite protection).
"""

from __future__ import annotations


def _less(a: tuple[float, str], b: tuple[float, str]) -> bool:
    return a[0] < b[0] or (a[0] == b[0] and a[1] < b[1])


def heappush(heap: list[tuple[float, str]], item: tuple[float, str]) -> None:
    """``heapq.heappush(heap, item)``."""
    heap.append(item)
    _sift_down(heap, 0, len(heap) - 1)


def heappop(heap: list[tuple[float, str]]) -> tuple[float, str]:
    """``heapq.heappop(heap)``: the least pair, taken out (IndexError on an empty heap)."""
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    heap[0] = last
    _sift_up(heap, 0)
    return top


def _sift_down(heap: list[tuple[float, str]], start: int, pos: int) -> None:
    """``heapq._siftdown``."""
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if _less(item, parent):
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


def _sift_up(heap: list[tuple[float, str]], pos: int) -> None:
    """``heapq._siftup``."""
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not _less(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_down(heap, start, pos)
