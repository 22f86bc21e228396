"""Pending jobs by queue, each queue kept sorted by its mode's key (``core.modes``): in
``budgets`` one queue per account for allocated work and one for its unallocated work; the
baselines use a single global queue.

A round offers a queue's candidates (``core.scheduler``), and the fast walk (``core.walk``)
tests its necessary conditions on those candidates.  The slicing rule asks the fewest GPUs per
node any job of a queue needs (``min_per``), kept as counts per value (a handful of values).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from allotment.core.state import Pend

Key = tuple[float, float, str]


class QueueSet:
    def __init__(self) -> None:
        self.keys: dict[str, list[Key]] = {}
        self.pers: dict[str, dict[int, int]] = {}  # queue -> GPUs per node (> 0) -> how many jobs

    def add(self, p: Pend) -> None:
        q = p.queue
        lst = self.keys.setdefault(q, [])
        lst.insert(bisect_left(lst, p.key), p.key)
        if p.per > 0:
            c = self.pers.setdefault(q, {})
            c[p.per] = c.get(p.per, 0) + 1

    def remove(self, p: Pend) -> None:
        lst = self.keys[p.queue]
        i = bisect_left(lst, p.key)
        if i >= len(lst) or lst[i] != p.key:
            raise KeyError(p.jid)
        lst.pop(i)
        if p.per > 0:
            c = self.pers[p.queue]
            c[p.per] -= 1
            if not c[p.per]:
                del c[p.per]

    def min_per(self, q: str) -> int:
        """The fewest GPUs per node any job of ``q`` that can be placed needs (0: none)."""
        c = self.pers.get(q)
        return min(c) if c else 0

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
