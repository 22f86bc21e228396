"""Pending jobs by queue, each queue kept sorted by its mode's key (``core.modes``): in
``budgets`` one queue per account for allocated work and one for its unallocated work; the
baselines use a single global queue.

Besides the sorted keys, each queue keeps counts of its jobs' shapes (GPUs per node, total GPUs,
gangs): the exact necessary conditions the fast walk (``core.walk``) tests before visiting it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from allotment.core.state import Pend

Key = tuple[float, float, str]


def _inc(d: dict[int, int], k: int, by: int) -> None:
    v = d.get(k, 0) + by
    if v:
        d[k] = v
    else:
        del d[k]


class QueueSet:
    def __init__(self) -> None:
        self.keys: dict[str, list[Key]] = {}
        self.per: dict[str, dict[int, int]] = {}  # queue -> GPUs per node -> jobs
        self.gpus: dict[str, dict[int, int]] = {}  # queue -> GPUs -> jobs
        self.gangs: dict[str, int] = {}  # queue -> allocated multi-node jobs

    def add(self, p: Pend) -> None:
        q = p.queue
        lst = self.keys.setdefault(q, [])
        lst.insert(bisect_left(lst, p.key), p.key)
        self._count(p, 1)

    def remove(self, p: Pend) -> None:
        lst = self.keys[p.queue]
        i = bisect_left(lst, p.key)
        if i >= len(lst) or lst[i] != p.key:
            raise KeyError(p.jid)
        lst.pop(i)
        self._count(p, -1)

    def _count(self, p: Pend, by: int) -> None:
        q = p.queue
        if p.n > 0:
            _inc(self.per.setdefault(q, {}), p.per, by)
            _inc(self.gpus.setdefault(q, {}), p.gpus, by)
            if p.n > 1 and p.mr > 0:
                self.gangs[q] = self.gangs.get(q, 0) + by

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

    def min_per(self, q: str) -> int:
        """The fewest GPUs per node any placeable job of ``q`` needs (0 if none)."""
        d = self.per.get(q)
        return min(d) if d else 0

    def max_per(self, q: str) -> int:
        """The most GPUs per node any placeable job of ``q`` needs (0 if none)."""
        d = self.per.get(q)
        return max(d) if d else 0

    def min_gpus(self, q: str) -> int:
        d = self.gpus.get(q)
        return min(d) if d else 0

    def has_gang(self, q: str) -> bool:
        return self.gangs.get(q, 0) > 0
