"""Pending jobs by queue, each queue kept sorted by its mode's key (``core.modes``): in
``budgets`` one queue per account for allocated work and one for its unallocated work; the
baselines use a single global queue.

A round offers a queue's candidates (``core.scheduler``), and the fast walk (``core.walk``)
tests its necessary conditions on those candidates; before it even picks them, it tests the same
conditions on counts over the whole queue (``shapes``: a handful of values each), which cost
nothing to read: a condition false for every job is false for the candidates.  The slicing rule
asks the fewest GPUs per node any job of a queue needs (``min_per``) from the same counts.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from allotment.core.state import Pend

Key = tuple[float, float, str]


class Shapes:
    """Counts of one queue's placeable jobs (``n > 0``) by shape: all by GPUs per node, the
    allocated ones (``mr > 0``) by GPUs and by GPUs per node, and its allocated gangs."""

    __slots__ = ("alloc_gpus", "alloc_per", "gangs", "per")

    def __init__(self) -> None:
        self.per: dict[int, int] = {}
        self.alloc_gpus: dict[int, int] = {}
        self.alloc_per: dict[int, int] = {}
        self.gangs = 0

    def count(self, p: Pend, by: int) -> None:
        if p.n <= 0:
            return
        _bump(self.per, p.per, by)
        if p.mr > 0:
            _bump(self.alloc_gpus, p.gpus, by)
            _bump(self.alloc_per, p.per, by)
            if p.n > 1:
                self.gangs += by


def _bump(d: dict[int, int], k: int, by: int) -> None:
    v = d.get(k, 0) + by
    if v:
        d[k] = v
    else:
        del d[k]


class QueueSet:
    def __init__(self) -> None:
        self.keys: dict[str, list[Key]] = {}
        self.shapes: dict[str, Shapes] = {}
        self.version: dict[str, int] = {}  # per queue, bumped by every change of its jobs (core.candidates)

    def add(self, p: Pend) -> None:
        q = p.queue
        self.version[q] = self.version.get(q, 0) + 1
        lst = self.keys.setdefault(q, [])
        lst.insert(bisect_left(lst, p.key), p.key)
        sh = self.shapes.get(q)
        if sh is None:
            sh = self.shapes[q] = Shapes()
        sh.count(p, 1)

    def remove(self, p: Pend) -> None:
        lst = self.keys[p.queue]
        i = bisect_left(lst, p.key)
        if i >= len(lst) or lst[i] != p.key:
            raise KeyError(p.jid)
        lst.pop(i)
        self.shapes[p.queue].count(p, -1)
        self.version[p.queue] += 1

    def min_per(self, q: str) -> int:
        """The fewest GPUs per node any job of ``q`` that can be placed needs (0: none)."""
        sh = self.shapes.get(q)
        return min(sh.per) if sh is not None and sh.per else 0

    def nonempty(self) -> Iterator[str]:
        return (q for q, lst in self.keys.items() if lst)

    def __len__(self) -> int:
        return sum(len(lst) for lst in self.keys.values())

    def head(self, q: str, depth: int, skip: set[str]) -> Iterator[str]:
        """Job ids of ``q`` in key order, leaving out ``skip``, at most ``depth`` of them."""
        k = 0
        for key in self.keys.get(q, ()):
            if key[2] in skip:
                continue
            yield key[2]
            k += 1
            if k >= depth:
                return
