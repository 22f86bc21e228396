"""When a victim search that found nothing need not run again: the fast walk's memo of failed
searches (``core.walk``; the reference searches every time).

A failure is reused for the same pending job (the very ``Pend``: a requeued job is a new one),
the same search (``tag``) and the same pass inputs, either on the very same state
(``ClusterState.version`` and ``queued_version``) or, when the failure is ``lasting`` (``preemption.view.NoVictims``),
while nothing that could make it succeed has happened since (``ClusterState.growth``, and
``donor_growth`` if it looked at other accounts' work).  Starts
of protected work by accounts without preemptible work change the version but not the growth:
in a busy pass most rounds differ from the last only by such starts, and every blocked queue
head would otherwise search again after each one.
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
    donor_growth: int  # ClusterState.donor_growth
    version: int  # ClusterState.version
    queued: int  # ClusterState.queued_version (the slicing rule reads the queues)


@dataclass(frozen=True, slots=True)
class _Failed:
    job: Pend
    at: SearchState
    why: NoVictims


class FailedSearches:
    """Failed searches by (job id, tag), forgotten when the pass inputs change."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, Hashable], _Failed] = {}
        self._inputs = -1

    def known(self, p: Pend, tag: Hashable, at: SearchState) -> bool:
        """Did this very search already fail, and does that answer still hold at ``at``?"""
        f = self._by.get((p.jid, tag))
        if f is None or f.job is not p or f.at.inputs != at.inputs:
            return False
        if f.at.version == at.version and f.at.queued == at.queued:
            return True
        why, was = f.why, f.at
        return why.lasting and was.growth == at.growth and (not why.donors or was.donor_growth == at.donor_growth)

    def remember(self, p: Pend, tag: Hashable, at: SearchState, why: NoVictims) -> None:
        if at.inputs != self._inputs:
            self._by, self._inputs = {}, at.inputs
        self._by[(p.jid, tag)] = _Failed(p, at, why)
