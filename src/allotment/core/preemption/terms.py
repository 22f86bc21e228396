"""What a victim search for one job may take, read from the state before any single job is
looked at: may it reclaim from other accounts (and which are donors), slice its own team, take
jobs that yield to a reservation, and how many GPUs all of that plus the free ones come to.

``victims.find_victims`` reads these terms to bound a search, and ``victims.still_fails`` the
same terms to tell whether a failed search still fails on a later state: one definition for
both.
"""

from __future__ import annotations

import math

from allotment.core.debug import is_debug
from allotment.core.fairshare import served_more
from allotment.core.preemption.view import NoVictims, VictimView
from allotment.core.preemption.view import lasting as lasting_failure
from allotment.core.state import Pend


class Donor:
    """An account that may give up work (a plain slotted class: see ``preemption.retry``)."""

    __slots__ = ("measure", "over")

    def __init__(self, over: float, measure: float) -> None:
        self.over = over  # GPUs it runs above what it is owed
        self.measure = measure  # its reclaim measure


_NO_DONORS: dict[str, Donor] = {}


class Terms:
    """The terms of one search for ``p`` (read-only by convention; a plain slotted class, one
    per search).  ``enough``: the free GPUs plus every GPU it could take reach ``p.gpus``
    (False: the search fails, ``lasting``).  ``donors`` is read only if the first bound passes
    (it is then the same object every search of ``p.account`` on one state gets: callers only
    read it)."""

    __slots__ = ("donors", "enough", "lasting", "own", "reclaim", "reserve")

    def __init__(self, v: VictimView, p: Pend, owed: dict[str, float], measure: dict[str, float],
                 slice_ok: bool, only_unallocated: bool, reserve: bool) -> None:
        acct, req = v.acct, p.account
        self.reclaim = may_reclaim(v, p, owed, only_unallocated)
        # its own team's lower-priority work (and a debug job's same-priority work)
        self.own = v.reclaims and slice_ok and not only_unallocated and acct.alloc_gpus_pre.get(req, 0) > 0
        # any account's jobs that yield to a reservation, for a job that may hold one
        self.reserve = reserve and not only_unallocated and acct.yield_gpus > 0
        self.lasting: NoVictims = lasting_failure(self.reclaim)
        self.donors = _NO_DONORS
        own_pre = acct.alloc_gpus_pre.get(req, 0)
        bound = v.pool.free_gpus() + acct.unalloc_gpus + (own_pre if self.own else 0)
        bound += acct.yield_gpus if self.reserve else 0
        if self.reclaim:
            # the donors are other accounts: the same bound with all their preemptible GPUs first
            if bound + acct.alloc_gpus_pre_total - own_pre < p.gpus:
                self.enough = False
                return
            self.donors = donors(v, req, owed, measure)
            for a in self.donors:
                bound += acct.alloc_gpus_pre.get(a, 0)
        self.enough = bound >= p.gpus

    def owners(self, req: str, donors: bool = True) -> set[str]:
        """Whose preemptible work the search may take ("" = unallocated work); without
        ``donors``, the accounts other than its own left out."""
        out = {"", *self.donors} if donors else {""}
        if self.own:
            out.add(req)
        return out


def may_reclaim(v: VictimView, p: Pend, owed: dict[str, float], only_unallocated: bool) -> bool:
    """May a search for ``p`` take other accounts' work (and the search is not one for
    unallocated work only)?  When its account runs below what it is owed; and, with
    ``Policy.debug_reclaim``, when ``p`` is a debug job (``core.debug``) whatever its account
    runs now.  Ai2's contract: a job past its minimum runtime runs on "as long as the associated
    allocations continue to prioritize it over others", by the window's fair-share balance, and
    debug work starts in seconds.  On a cluster whose allocations are smaller than a node most
    teams run above what they are owed *now* whenever they run anything, so the first condition
    alone left their debug jobs waiting for natural ends (``ai2`` on b200, seed 1: 86% of the debug
    jobs that waited over a minute could have taken allocated work past its protection).  The
    donors are still only accounts served more over the window and running over what they are
    owed, and the summed distance check still holds (``victims._lowers_distance``)."""
    if not v.reclaims or only_unallocated:
        return False
    if v.acct.alloc_gpus.get(p.account, 0) < owed.get(p.account, 0.0):
        return True
    return v.debug_threshold_s >= 0 and is_debug(p.mr, p.gpus, v.debug_threshold_s, v.pool.max_gpus)


def donors(v: VictimView, req: str, owed: dict[str, float], measure: dict[str, float]) -> dict[str, Donor]:
    """Accounts that may give up work to ``req``: over what they are owed, served more (the
    same for every search of ``req`` on one state: kept in the view's memo when it has one;
    callers only read it)."""
    memo = v.memo
    if memo is None:
        return _donors(v, req, owed, measure)
    got: dict[str, dict[str, Donor]] | None = memo.get("donors")
    # a local typed ``dict``, not ``dict | None``: under mypyc ``.get`` on an optional is a
    # generic method call (110,102 of them in a 27-day Philly-shaped run)
    by: dict[str, dict[str, Donor]] = {} if got is None else got
    if got is None:
        memo["donors"] = by
    known = by.get(req)
    if known is not None:
        return known
    out = by[req] = _donors(v, req, owed, measure)
    return out


def _donors(v: VictimView, req: str, owed: dict[str, float], measure: dict[str, float]) -> dict[str, Donor]:
    """``donors`` computed: every account over what it is owed that was served more than
    ``req`` (by the view's hysteresis)."""
    out: dict[str, Donor] = {}
    m_req = measure.get(req, math.inf)
    for a, d in _over_owed(v, owed, measure):
        if a != req and served_more(d.measure, m_req, v.hysteresis):
            out[a] = d
    return out


def _over_owed(v: VictimView, owed: dict[str, float], measure: dict[str, float]) -> list[tuple[str, Donor]]:
    """Accounts with preemptible allocated work running above what they are owed (the same for
    every requester on one state: kept in the view's memo when it has one)."""
    memo = v.memo
    if memo is not None and "over_owed" in memo:
        got: list[tuple[str, Donor]] = memo["over_owed"]
        return got
    out = []
    for a, ids in v.acct.alloc.items():
        if not ids:
            continue
        over = v.acct.alloc_gpus.get(a, 0) - owed.get(a, 0.0)
        if over > 0:
            out.append((a, Donor(over, measure.get(a, math.inf))))
    if memo is not None:
        memo["over_owed"] = out
    return out
