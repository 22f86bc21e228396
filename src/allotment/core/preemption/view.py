"""What a victim search may read: the pool, the running jobs and the accounting, plus the rule
parameters.  A frozen record of references; the searches never write through it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from allotment.core.accounting import Accounting
from allotment.core.placement import NodePool
from allotment.core.state import Run


class VictimView:
    """Read-only by convention; a plain slotted class, not a frozen dataclass, because the fast
    walk makes one per state version and under mypyc a frozen dataclass's ``__init__`` runs as
    interpreted Python (``preemption.retry.SearchState``)."""

    __slots__ = ("acct", "debug_threshold_s", "hysteresis", "keep_nonresumable", "memo", "pool", "reclaims", "running",
                 "spare_gangs", "t")

    def __init__(self, pool: NodePool, running: dict[str, Run], acct: Accounting, keep_nonresumable: bool,
                 hysteresis: float, reclaims: bool, t: float, memo: dict[str, Any] | None = None,
                 debug_threshold_s: float = -1.0, spare_gangs: int = 0) -> None:
        self.pool = pool
        self.running = running  # a dict, not a Mapping: under mypyc a Mapping's [] is a generic call
        self.acct = acct
        self.keep_nonresumable = keep_nonresumable  # non_resumable == "run_to_completion": never victims
        self.hysteresis = hysteresis  # relative margin of the reclaim measure (Policy.reclaim_hysteresis)
        self.reclaims = reclaims  # the mode allows reclaim and within-team slicing
        # a debug job (core.debug: minimum runtime within this) may reclaim whatever its account
        # runs now (Policy.debug_reclaim); -1: no job may
        self.debug_threshold_s = debug_threshold_s
        self.t = t  # the pass's epoch: lost work that orders victims is evaluated here
        # answers that depend only on the state and the pass inputs, kept while both stay the
        # same (the fast walk makes one view per state version and inputs); None: recompute
        self.memo = memo
        # knob spare_gangs: break no running gang larger than the requester first (gang_sparing.FORMS; 0: off)
        self.spare_gangs = spare_gangs


class Victim:
    """A job a search chose to evict, by which rule, and why.  Read-only by convention; a plain
    slotted class for the reason ``VictimView`` is one (a frozen dataclass's ``__init__`` was
    about 4,600 instructions per victim under mypyc)."""

    __slots__ = ("job_id", "reason", "rule")

    def __init__(self, job_id: str, rule: str, reason: str) -> None:
        self.job_id = job_id
        self.rule = rule  # "unallocated" | "reservation" | "within-team" | "reclaim" | "debug-slice"
        self.reason = reason

    def __repr__(self) -> str:
        return f"Victim({self.job_id!r}, {self.rule!r}, {self.reason!r})"


@dataclass(frozen=True, slots=True)
class NoVictims:
    """A victim search that found nothing.  ``lasting``: fewer than ``n`` nodes could hold the
    job even if every job it may take there went (each lasting return of ``find_victims``
    implies this, the bounds included: a node's free plus takeable GPUs are at most the
    bound), which holds until something grows what is free or takeable *on a node* -- a job
    stops there (other than takeable unallocated work, whose GPUs just turn free), a job there
    becomes preemptible, its health changes (``ClusterState.grown``, read back by
    ``preemption.retry``) -- or what the search may take grows everywhere at once: with
    ``reclaim`` (it looked at other accounts as donors), an account with preemptible allocated
    work comes to run over what it is owed and may turn donor (``ClusterState.donor_growth``);
    without it, the requester's team runs below what it is owed and starts to look at donors.
    Starts only shrink it.  Otherwise (the free nodes would do but a reservation kept the job
    off them, or the move would not lower the distance from what is owed) it holds only on the
    very same state.

    ``bare`` (not part of the answer: equality ignores it) marks the ``FOR_NOW`` of a search
    that proved no reclaim could pass the distance check (``futile_reclaim``) and then found
    fewer than ``n`` nodes its own team's and unallocated work could free
    (``victims._without_reclaim``).  The fast walk may reuse it on a later state while the
    proof still holds there and no node where that work could make room grew
    (``victims.still_bare``, ``preemption.retry``)."""

    lasting: bool
    reclaim: bool = False
    bare: bool = field(default=False, compare=False)


FOR_NOW = NoVictims(False)
FOR_NOW_BARE = NoVictims(False, False, True)  # the FOR_NOW of victims._without_reclaim (``bare``)
# the lasting answers, made once: a search returns one of these rather than building its own
_LASTING_R = NoVictims(True, True)
_LASTING = NoVictims(True, False)


def lasting(reclaim: bool) -> NoVictims:
    """The lasting ``NoVictims`` (shared instances; they are immutable)."""
    return _LASTING_R if reclaim else _LASTING


def lost_work(r: Run, t: float) -> float:
    """Seconds of progress a preemption at ``t`` would throw away."""
    ran = max(0.0, t - r.start)
    if not r.resumable:
        return ran
    ci = r.ckpt
    if ci is None or ci <= 0:
        return 0.0
    return ran - math.floor(ran / ci) * ci
