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

import math
from collections.abc import Iterator

from allotment.core.ids import NO_ACCOUNT
from allotment.core.modes import FREE_SUFFIX
from allotment.core.sorted_pairs import drop_named, insort_named, key_place
from allotment.core.starvation import is_starving
from allotment.core.state import Pend

Key = tuple[float, float, str]


class Shapes:
    """Counts of one queue's placeable jobs (``n > 0``) by shape: all by GPUs per node, the
    allocated ones (``mr > 0``) by GPUs and by GPUs per node, and its allocated gangs.  The
    extremes the fast walk tests on every round (``least_per``, ``least_alloc_gpus``,
    ``most_alloc_per``) are kept until the next count changes them, not found by a loop over
    the counts each time."""

    __slots__ = ("_fresh", "_hi_alloc_per", "_lo_alloc_gpus", "_lo_per", "alloc_eligible", "alloc_gpus", "alloc_per",
                 "gang_eligible", "gang_gpus", "gangs", "per", "short")

    def __init__(self) -> None:
        self.per: dict[int, int] = {}
        self.alloc_gpus: dict[int, int] = {}
        self.alloc_per: dict[int, int] = {}
        self.gangs = 0
        # (eligible, id) of the allocated placeable jobs, sorted: the oldest tells at once whether
        # any of them is starving (``core.starvation``), for the reservation's holder search
        # and the fast walk (a starving job of a tier-0 queue may hold the reservation)
        self.alloc_eligible: list[tuple[float, str]] = []
        self.gang_eligible: list[tuple[float, str]] = []  # the same, of the allocated gangs
        self.gang_gpus: dict[int, int] = {}  # the allocated gangs by GPUs
        # (how soon it could leave a reserved node, id) of every placeable job, sorted: its
        # minimum runtime or remaining work, whichever is less (0 for unallocated work, which
        # yields at once) -- a lower bound of what ``reservation.allow_for`` compares with the
        # hold's start, so the fast walk knows whether any job here may start on reserved GPUs
        self.short: list[tuple[float, str]] = []
        self._fresh = False  # are the three extremes below those of the counts?
        self._lo_per = self._lo_alloc_gpus = self._hi_alloc_per = 0

    def count(self, p: Pend, by: int) -> None:
        if p.n <= 0:
            return
        self._fresh = False
        _bump(self.per, p.per, by)
        _place(self.short, (min(p.mr, max(0.0, p.work - p.done_work)) if p.mr > 0 else 0.0, p.jid), by)
        if p.mr > 0:
            _bump(self.alloc_gpus, p.gpus, by)
            _bump(self.alloc_per, p.per, by)
            if p.n > 1:
                self.gangs += by
                _place(self.gang_eligible, (p.eligible, p.jid), by)
                _bump(self.gang_gpus, p.gpus, by)
            _place(self.alloc_eligible, (p.eligible, p.jid), by)

    def any_starving(self, t: float) -> bool:
        """Is an allocated placeable job of the queue starving at ``t`` (``core.starvation``)?"""
        return bool(self.alloc_eligible) and is_starving(t - self.alloc_eligible[0][0])

    def least_short(self) -> float:
        """The least of ``short`` (inf: no placeable job)."""
        return self.short[0][0] if self.short else math.inf

    def least_gang_gpus(self) -> int:
        """The fewest GPUs of an allocated gang (0: none)."""
        return _extreme(self.gang_gpus, 1)

    def least_per(self) -> int:
        """The fewest GPUs per node of a placeable job (0: none)."""
        if not self._fresh:
            self._refresh()
        return self._lo_per

    def least_alloc_gpus(self) -> int:
        """The fewest GPUs of an allocated placeable job (0: none)."""
        if not self._fresh:
            self._refresh()
        return self._lo_alloc_gpus

    def most_alloc_per(self) -> int:
        """The most GPUs per node of an allocated placeable job (0: none)."""
        if not self._fresh:
            self._refresh()
        return self._hi_alloc_per

    def _refresh(self) -> None:
        self._lo_per = _extreme(self.per, 1)
        self._lo_alloc_gpus = _extreme(self.alloc_gpus, 1)
        self._hi_alloc_per = -_extreme(self.alloc_per, -1)
        self._fresh = True


def _extreme(counts: dict[int, int], sign: int) -> int:
    """The least of ``sign`` x the keys of ``counts`` (0 for none): a plain loop, since under
    mypyc the builtins ``min``/``max`` over a dict are generic calls."""
    best = 0
    first = True
    for k in counts:
        v = sign * k
        if first or v < best:
            best, first = v, False
    return best


def _place(sorted_list: list[tuple[float, str]], e: tuple[float, str], by: int) -> None:
    """Add (``by`` > 0) or remove ``e`` in ``sorted_list``, kept sorted."""
    if by > 0:
        insort_named(sorted_list, e)
    else:
        drop_named(sorted_list, e)


def _name_of(q: Queue) -> str:
    return q.name


def _bump(d: dict[int, int], k: int, by: int) -> None:
    v = d.get(k, 0) + by
    if v:
        d[k] = v
    else:
        del d[k]


class Queue:
    """One queue: its jobs' keys in key order and the jobs in the same order (``jobs[i]`` has
    ``keys[i]``), their ``shapes``, a ``version`` bumped by every change of its jobs
    (``core.candidates``), and what its name says, parsed once: its ``account`` and whether it
    holds that account's unallocated work (``free``).  ``qid`` is its index in
    ``QueueSet.queues`` (``core.ids``: dense, given on first sight), ``aid`` its account's id
    (``NO_ACCOUNT`` for a queue of many accounts: the baselines' one queue)."""

    __slots__ = ("account", "aid", "free", "jobs", "keys", "name", "qid", "shapes", "version")

    def __init__(self, name: str, qid: int) -> None:
        self.name, self.qid = name, qid
        self.free = name.endswith(FREE_SUFFIX)
        self.account = name[: -len(FREE_SUFFIX)] if self.free else name
        self.aid = NO_ACCOUNT
        self.keys: list[Key] = []
        self.jobs: list[Pend] = []
        self.shapes = Shapes()
        self.version = 0


class QueueSet:
    """The queues by name (the edges, and the round's order, which ends in names) and by id;
    and by name order (``by_rank``: ``rank[qid]`` is the queue's place among all the names,
    re-dealt when a new name arrives, which bumps ``names_version``), so that a round's order
    can end in an integer rather than a string (``core.scheduler``)."""

    def __init__(self) -> None:
        self.by_name: dict[str, Queue] = {}
        self.queues: list[Queue] = []  # by id
        self.rank: list[int] = []  # by id: the place of the queue's name in sorted order
        self.by_rank: list[Queue] = []  # the queues in name order
        self.names_version = 0

    def queue(self, name: str) -> Queue:
        """The queue called ``name``, made empty on first sight."""
        got = self.by_name.get(name)
        if got is None:
            got = self.by_name[name] = Queue(name, len(self.queues))
            self.queues.append(got)
            self.by_rank = sorted(self.queues, key=_name_of)
            self.rank = [0] * len(self.queues)
            for k, q in enumerate(self.by_rank):
                self.rank[q.qid] = k
            self.names_version += 1
        return got

    def add(self, p: Pend) -> None:
        q = self.queue(p.queue)
        if p.account == q.account:
            q.aid = p.aid
        q.version += 1
        i = key_place(q.keys, p.key)
        q.keys.insert(i, p.key)
        q.jobs.insert(i, p)
        q.shapes.count(p, 1)

    def remove(self, p: Pend) -> None:
        q = self.by_name[p.queue]
        i = key_place(q.keys, p.key)
        if i >= len(q.keys) or q.keys[i] != p.key:
            raise KeyError(p.jid)
        q.keys.pop(i)
        q.jobs.pop(i)
        q.shapes.count(p, -1)
        q.version += 1

    def min_per(self, q: str) -> int:
        """The fewest GPUs per node any job of ``q`` that can be placed needs (0: none)."""
        got = self.by_name.get(q)
        return got.shapes.least_per() if got is not None else 0

    def nonempty(self) -> Iterator[str]:
        return (q.name for q in self.queues if q.keys)

    def nonempty_queues(self) -> list[Queue]:
        """The queues holding jobs, by id."""
        return [q for q in self.queues if q.keys]

    def __len__(self) -> int:
        return sum(len(q.keys) for q in self.queues)

    def head(self, q: str, depth: int, skip: set[str]) -> Iterator[str]:
        """Job ids of ``q`` in key order, leaving out ``skip``, at most ``depth`` of them."""
        k = 0
        got = self.by_name.get(q)
        for key in got.keys if got is not None else ():
            if key[2] in skip:
                continue
            yield key[2]
            k += 1
            if k >= depth:
                return
