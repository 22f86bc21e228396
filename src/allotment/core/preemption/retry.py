"""When a victim search that found nothing need not run again: the fast walk's memo of failed
searches (``core.walk``; the reference searches every time).

A failure is reused for the same pending job (the very ``Pend``: a requeued job is a new one) --
or, for a search for unallocated work only, which reads nothing of the job but its shape, for any
job of that shape -- the same search (reservation, kind) and the same pass inputs, either on the
very same state (``ClusterState.version`` and ``queued_version``, at the same time, for the same
queue key: what the slicing rule reads) or, when the failure is ``lasting``
(``preemption.view.NoVictims``: the first search failed, before any slicing check), while nothing
that could make it succeed has happened since (``ClusterState.growth``; ``alloc_growth`` if it may
take allocated work; ``donor_growth`` if it looked at other accounts' work).  Starts change the
version but never the growth, nor does the end of unallocated work a search could take (its GPUs
turn free), nor, for a search for unallocated work only, the end of an allocated job's
protection: in a busy pass most rounds differ from the last only by such changes, and every
blocked candidate would otherwise search again after each one.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from allotment.core.preemption.view import NoVictims
from allotment.core.state import Pend


@dataclass(frozen=True, slots=True)
class SearchState:
    """What a failed search's answer is tied to."""

    inputs: int  # the scheduler's pass-inputs id (epoch, usage, capacity)
    growth: int  # ClusterState.growth
    alloc_growth: int  # ClusterState.alloc_growth
    donor_growth: int  # ClusterState.donor_growth
    version: int  # ClusterState.version
    queued: int  # ClusterState.queued_version (the slicing rule reads the queues ...)
    now: float  # ... the time (a start's end against its victims'; slicing.ends_within) ...
    queue: tuple[int, int, str]  # ... and the key the round visits the queue under


@dataclass(frozen=True, slots=True)
class _Failed:
    job: Pend | None  # None: the answer holds for any job with the same key
    at: SearchState
    why: NoVictims


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
        return (why.lasting and was.growth == at.growth and (not why.alloc or was.alloc_growth == at.alloc_growth)
                and (not why.donors or was.donor_growth == at.donor_growth))

    def remember(self, key: Hashable, job: Pend | None, at: SearchState, why: NoVictims) -> None:
        if at.inputs != self._inputs:
            self._by, self._inputs = {}, at.inputs
        self._by[key] = _Failed(job, at, why)
