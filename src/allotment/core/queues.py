"""Pending jobs by queue, each queue kept sorted by its mode's key (``core.modes``): in
``budgets`` one queue per account for allocated work and one for its unallocated work; the
baselines use a single global queue.

A round only looks at a queue's head (``head``), so the fast walk (``core.walk``) tests its
necessary conditions on those candidates, not on counts over the whole queue.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from allotment.core.state import Pend

Key = tuple[float, float, str]


class QueueSet:
    def __init__(self) -> None:
        self.keys: dict[str, list[Key]] = {}

    def add(self, p: Pend) -> None:
        q = p.queue
        lst = self.keys.setdefault(q, [])
        lst.insert(bisect_left(lst, p.key), p.key)

    def remove(self, p: Pend) -> None:
        lst = self.keys[p.queue]
        i = bisect_left(lst, p.key)
        if i >= len(lst) or lst[i] != p.key:
            raise KeyError(p.jid)
        lst.pop(i)

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
