"""When a victim search that found nothing need not run again: the fast walk's memo of failed
searches (``core.walk``; the reference searches every time).

A failure is reused for the same pending job (the very ``Pend``: a requeued job is a new one) --
or, for a search for unallocated work only, which reads nothing of the job but its shape, for any
job of that shape -- the same search (reservation, kind) and the same pass inputs, either on the
very same state (``ClusterState.version`` and ``queued_version``, at the same time, for the same
queue key: what the slicing rule reads) or, when the failure is ``lasting``
(``preemption.view.NoVictims``: the first search failed, before any slicing check), while nothing
that could make it succeed has happened since (``ClusterState.growth``; if it looked at other
accounts' work, ``alloc_growth`` and ``donor_growth``; else, if it may take its own team's
allocated work, that team's ``own_growth``).  Starts change the
version but never the growth, nor does the end of unallocated work a search could take (its GPUs
turn free), nor, for a search for unallocated work only, the end of an allocated job's
protection: in a busy pass most rounds differ from the last only by such changes, and every
blocked candidate would otherwise search again after each one.
"""

from __future__ import annotations

from collections.abc import Hashable

from allotment.core.preemption.view import NoVictims
from allotment.core.state import Pend


class SearchState:
    """What a failed search's answer is tied to.  Read-only by convention, and a plain slotted
    class rather than a frozen dataclass: one is made per victim search, and under mypyc a
    frozen dataclass's ``__init__`` still runs as interpreted Python (it was 8% of a compiled
    run); a plain class gets a native one."""

    __slots__ = ("alloc_growth", "donor_growth", "growth", "inputs", "now", "own_growth", "queue", "queued", "version")

    def __init__(self, inputs: int, growth: int, alloc_growth: int, own_growth: int, donor_growth: int, version: int,
                 queued: int, now: float, queue: tuple[int, int, str]) -> None:
        self.inputs = inputs  # the scheduler's pass-inputs id (epoch, usage, capacity)
        self.growth = growth  # ClusterState.growth
        self.alloc_growth = alloc_growth  # ClusterState.alloc_growth
        self.own_growth = own_growth  # ClusterState.own_growth of the searching job's account
        self.donor_growth = donor_growth  # ClusterState.donor_growth
        self.version = version  # ClusterState.version
        self.queued = queued  # ClusterState.queued_version (the slicing rule reads the queues ...)
        self.now = now  # ... the time (a start's end against its victims'; slicing.ends_within) ...
        self.queue = queue  # ... and the key the round visits the queue under


class _Failed:
    """A remembered failure (a plain class for the reason ``SearchState`` is one)."""

    __slots__ = ("at", "job", "why")

    def __init__(self, job: Pend | None, at: SearchState, why: NoVictims) -> None:
        self.job = job  # None: the answer holds for any job with the same key
        self.at = at
        self.why = why


class FailedSearches:
    """Failed searches by key (the caller's: a job id and tag, or a shape and tag for searches
    that read nothing else of the job), forgotten when the pass inputs change."""

    def __init__(self) -> None:
        self._by: dict[Hashable, _Failed] = {}
        self._inputs = -1

    def known(self, key: Hashable, job: Pend | None, at: SearchState) -> bool:
        """Did this very search already fail, and does that answer still hold at ``at``?"""
        f = self._by.get(key)
        if f is None or f.job is not job or f.at.inputs != at.inputs:
            return False
        why, was = f.why, f.at
        if was.version == at.version and was.queued == at.queued and was.now == at.now and was.queue == at.queue:
            return True
        if not why.lasting or was.growth != at.growth:
            return False
        if why.donors:  # it read other accounts' allocated work
            return was.alloc_growth == at.alloc_growth and was.donor_growth == at.donor_growth
        return not why.alloc or was.own_growth == at.own_growth  # ... else at most its own team's

    def remember(self, key: Hashable, job: Pend | None, at: SearchState, why: NoVictims) -> None:
        if at.inputs != self._inputs:
            self._by, self._inputs = {}, at.inputs
        self._by[key] = _Failed(job, at, why)
