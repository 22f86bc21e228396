"""The simulator's event queue: a binary heap of ``Due`` entries in (time, kind, sequence) order.

Why not ``heapq`` on tuples: under mypyc every ``heappush``/``heappop`` was a generic call whose
sift compared boxed tuples element by element (an equality then a ``<`` per field, each through
the float's rich comparison), about 1,900 instructions a pop on the ~300 entries of an
``ai2-big-gangs`` run, 37 thousand pops in its first 3 days.  Here the entries are compiled
records and the comparison reads their native fields.

Same order: ``push`` and ``pop`` are ``heapq``'s own steps (``_siftdown``, ``_siftup``), and
``before`` is the tuple ``<`` of ``(t, kind, seq)`` -- ``seq`` is unique, so entries pop in one
total order whatever the heap's layout.  A time is never NaN (a trace's are checked finite;
``run`` could not pass a NaN at the heap's top anyway), the one value where the two differ (a
tuple holds the same NaN object equal to itself).
"""

from __future__ import annotations

from typing import Any


class Due:
    """One queued event: at ``t``, of ``kind`` (``sim.runner``'s order at one time), the
    ``seq``-th pushed (ties at one time and kind go in push order), with its ``payload``.
    Read-only by convention: a plain class, since under mypyc a frozen dataclass's
    ``__init__`` runs interpreted."""

    __slots__ = ("kind", "payload", "seq", "t")

    def __init__(self, t: float, kind: int, seq: int, payload: Any) -> None:
        self.t = t
        self.kind = kind
        self.seq = seq
        self.payload = payload

    def __reduce__(self) -> tuple[Any, ...]:
        """The constructor with every field: a paused run pickles and deep-copies its queue,
        and a compiled class has no ``__dict__`` for the default protocol."""
        return (Due, (self.t, self.kind, self.seq, self.payload))

    def __repr__(self) -> str:
        return f"Due({self.t!r}, {self.kind}, {self.seq}, {self.payload!r})"


def before(a: Due, b: Due) -> bool:
    """``(a.t, a.kind, a.seq) < (b.t, b.kind, b.seq)``, field by field."""
    return a.t < b.t or (a.t == b.t and (a.kind < b.kind or (a.kind == b.kind and a.seq < b.seq)))


def push(heap: list[Due], item: Due) -> None:
    """``heapq.heappush(heap, item)``."""
    heap.append(item)
    _sift_down(heap, 0, len(heap) - 1)


def pop(heap: list[Due]) -> Due:
    """``heapq.heappop(heap)``: the least entry, taken out (IndexError on an empty heap)."""
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    heap[0] = last
    _sift_up(heap, 0)
    return top


def _sift_down(heap: list[Due], start: int, pos: int) -> None:
    """``heapq._siftdown``: move the entry at ``pos`` up towards ``start`` to its place."""
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if before(item, parent):
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


def _sift_up(heap: list[Due], pos: int) -> None:
    """``heapq._siftup``: the hole at ``pos`` goes down to a leaf by the lesser child, then the
    entry that was there sifts back up (fewer comparisons than stopping early)."""
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not before(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_down(heap, start, pos)
