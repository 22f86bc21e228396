"""Victims for an allocated job that does not fit (docs/design/preemption.md).

It may take GPUs from running jobs past their protection, in this order of preference:

0. ``unallocated``: free work (minimum runtime 0) is preemptible at once by any allocated job,
   whatever its place in its queue (``only_unallocated``: the search a non-first candidate gets);
   ``reservation``: a job that started on a reserved node it would overrun, admitted because its
   protection ended before the reservation's start (``Run.yields``, ``core.reservation``), past
   that protection, by a job that may hold a reservation (``reserve``: a gang or a starving
   whole-node job), whatever its account -- the terms it was admitted on;
1. ``within-team``: the same account's jobs of strictly lower declared priority, whatever the
   sign (priority 0 slices -5; a team slices its own time; strict order means two jobs can never
   evict each other), unless the pass forbids it (``slice_ok``, ``core.preemption.slicing``);
2. ``reclaim``: another account's jobs, only when the requester's account runs less than it is
   owed, the victim's runs more, the victim's reclaim measure (``core.fairshare``) is higher by
   the hysteresis margin, and the move strictly lowers the summed distance of the accounts
   involved from what they are owed.  That last rule is a potential function: every reclaim lowers
   it, so reclaims cannot cycle.  Anti-thrash: a job may not evict the job that evicted it
   (``evicted_by``) unless the margin is doubled.
3. ``debug-slice``: for a debug job only (``debug_end``: when it would end; None for any other
   job), the same account's jobs of the *same* declared priority that would end after it
   (``core.preemption.debug_slice``), when nothing above would do.

Within a class the least lost work goes first (progress since the last checkpoint x GPUs); among
reclaim victims the most over-served account goes first.  Nodes are chosen to need the cheapest
victims; a gang needs ``n`` such nodes.  Only nodes ``allow`` admits are considered: a job that
would still run when the reservation starts may not take a reserved node (``core.reservation``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from allotment.core.fairshare import served_more
from allotment.core.placement import NodeFilter
from allotment.core.preemption import debug_slice
from allotment.core.preemption.view import FOR_NOW, NoVictims, Victim, VictimView, lost_work
from allotment.core.preemption.view import lasting as lasting_failure
from allotment.core.state import Pend

CLASS_UNALLOC, CLASS_YIELD, CLASS_WITHIN, CLASS_RECLAIM, CLASS_DEBUG = 0, 1, 2, 3, 4
YIELD_WHY = "started on a reserved node past the reservation's start; yields to it after its minimum runtime"
WITHIN_WHY = "lower within-team priority"
UNALLOC_WHY = "unallocated work yields to allocated work at once"


class _Cand:
    """A job a search may take.  A plain slotted class, not a frozen dataclass: one is made per
    job a search classifies, and under mypyc a frozen dataclass's ``__init__`` runs as
    interpreted Python (``preemption.retry.SearchState``)."""

    __slots__ = ("key", "reason", "rule")

    def __init__(self, key: tuple[int, float, float, str], rule: str, reason: str) -> None:
        self.key = key  # (class, -GPUs over entitlement, lost GPU-seconds, id)
        self.rule = rule
        self.reason = reason


class _Donor:
    """An account that may give up work (a plain slotted class, like ``_Cand``)."""

    __slots__ = ("measure", "over")

    def __init__(self, over: float, measure: float) -> None:
        self.over = over  # GPUs it runs above what it is owed
        self.measure = measure  # its reclaim measure


def find_victims(
    v: VictimView, p: Pend, n: int, per: int, owed: Mapping[str, float], measure: Mapping[str, float],
    *, allow: NodeFilter | None = None, slice_ok: bool = True, only_unallocated: bool = False, reserve: bool = False,
    debug_end: float | None = None,
) -> list[Victim] | NoVictims:
    """The victims whose eviction lets ``p`` start as ``n`` x ``per`` GPUs on nodes ``allow``
    admits, or why there are none (``NoVictims``: each ``lasting`` return below only gets truer
    as free GPUs shrink)."""
    acct, req = v.acct, p.account
    reclaim_ok = v.reclaims and not only_unallocated and acct.alloc_gpus.get(req, 0) < owed.get(req, 0.0)
    own = v.reclaims and slice_ok and not only_unallocated and acct.alloc_gpus_pre.get(req, 0) > 0
    # cheap bound first: could every GPU we might take, plus the free ones, be enough?
    takes_yields = reserve and not only_unallocated  # any account's jobs that yield to a reservation
    reserve = takes_yields and acct.yield_gpus > 0
    bound = v.pool.free_gpus() + acct.unalloc_gpus + (acct.alloc_gpus_pre.get(req, 0) if own else 0)
    bound += acct.yield_gpus if reserve else 0
    donors: dict[str, _Donor] = {}
    # a failure holds until ... other accounts' work grows takeable if it read donors or may take
    # yielding jobs (any account's, once their protection ends); its own, if it may take allocated work
    lasting = lasting_failure(reclaim_ok or takes_yields, v.reclaims and not only_unallocated)
    if reclaim_ok:
        # the donors are other accounts: the same bound with all their preemptible GPUs first
        if bound + acct.alloc_gpus_pre_total - acct.alloc_gpus_pre.get(req, 0) < p.gpus:
            return lasting
        donors = _donors(v, req, owed, measure)
        bound += sum(acct.alloc_gpus_pre.get(a, 0) for a in donors)
    if bound < p.gpus:
        return lasting
    if not donors and not own and not reserve and n == 1 and v.pool.soft_hole() < per:
        return lasting  # only unallocated work could yield, and no node has room even then
    owners = {"", *donors, *((req,) if own else ())}
    hosts = _freeable_hosts(v, p, per, owners, acct.yield_nodes if reserve else {})
    if allow is not None:
        hosts = [i for i in hosts if allow(i)]
    if len(hosts) < n:
        return lasting  # fewer than n nodes could hold it even if every takeable job there went
    if sum(1 for i in hosts if v.pool.free[i] >= per) >= n:
        return FOR_NOW  # free nodes would be the best options: only a reservation kept them out
    cands = _Classifier(v, p, own, donors, measure.get(req, math.inf), reserve, debug_end if own else None)
    picked = _pick_nodes(v, p, n, per, cands, hosts)
    if not picked:
        return lasting  # fewer than n nodes can be freed with the jobs it may take
    if not _lowers_distance(v, req, p.gpus, [j for j in picked if not _yielding(cands, j)], owed):
        return FOR_NOW
    out = []
    for j in picked:
        c = cands.get(j)
        assert c is not None
        out.append(Victim(j, c.rule, c.reason.format(job=p.jid)))
    return out


def _yielding(cands: _Classifier, jid: str) -> bool:
    c = cands.get(jid)
    return c is not None and c.rule == "reservation"


def _donors(v: VictimView, req: str, owed: Mapping[str, float], measure: Mapping[str, float]) -> dict[str, _Donor]:
    """Accounts that may give up work to ``req``: over what they are owed, served more (the
    same for every search of ``req`` on one state: kept in the view's memo when it has one;
    callers only read it)."""
    memo = v.memo
    by: dict[str, dict[str, _Donor]] | None = None
    if memo is not None:
        by = memo.get("donors")
        if by is None:
            by = memo["donors"] = {}
        known = by.get(req)
        if known is not None:
            return known
    out: dict[str, _Donor] = {}
    m_req = measure.get(req, math.inf)
    for a, d in _over_owed(v, owed, measure):
        if a != req and served_more(d.measure, m_req, v.hysteresis):
            out[a] = d
    if by is not None:
        by[req] = out
    return out


def _over_owed(v: VictimView, owed: Mapping[str, float], measure: Mapping[str, float]) -> list[tuple[str, _Donor]]:
    """Accounts with preemptible allocated work running above what they are owed (the same for
    every requester on one state: kept in the view's memo when it has one)."""
    memo = v.memo
    if memo is not None and "over_owed" in memo:
        got: list[tuple[str, _Donor]] = memo["over_owed"]
        return got
    out = []
    for a, ids in v.acct.alloc.items():
        if not ids:
            continue
        over = v.acct.alloc_gpus.get(a, 0) - owed.get(a, 0.0)
        if over > 0:
            out.append((a, _Donor(over, measure.get(a, math.inf))))
    if memo is not None:
        memo["over_owed"] = out
    return out


class _Classifier:
    """The class key, rule and reason of each job ``p`` may take (None: it may not), computed
    the first time a node's jobs are looked at."""

    def __init__(self, v: VictimView, p: Pend, own: bool, donors: Mapping[str, _Donor], m_req: float,
                 reserve: bool, debug_end: float | None) -> None:
        self.v, self.p, self.own, self.donors, self.m_req, self.reserve = v, p, own, donors, m_req, reserve
        self.debug_end = debug_end  # when p, a debug job that may slice its own team, would end
        self.seen: dict[str, _Cand | None] = {}

    def get(self, jid: str) -> _Cand | None:
        if jid in self.seen:
            return self.seen[jid]
        c = self.seen[jid] = self._classify(jid)
        return c

    def _classify(self, jid: str) -> _Cand | None:
        v, p = self.v, self.p
        if jid not in v.acct.preemptible:
            return None
        r = v.running[jid]
        if v.keep_nonresumable and not r.resumable:
            return None
        lost = lost_work(r, v.t) * r.gpus
        if not r.allocated:
            return _Cand((CLASS_UNALLOC, 0.0, lost, jid), "unallocated", UNALLOC_WHY)
        if self.reserve and r.yields:
            return _Cand((CLASS_YIELD, 0.0, lost, jid), "reservation", YIELD_WHY)
        if r.account == p.account:
            if self.own and r.declared < p.declared:
                return _Cand((CLASS_WITHIN, 0.0, lost, jid), "within-team", WITHIN_WHY + " than {job}")
            if self.debug_end is not None and debug_slice.may_take(self.debug_end, p.declared, r):
                return _Cand((CLASS_DEBUG, 0.0, lost, jid), debug_slice.RULE, debug_slice.WHY)
            return None
        d = self.donors.get(r.account)
        if d is None:
            return None
        if p.evicted_by == jid and not served_more(d.measure, self.m_req, 2 * v.hysteresis):
            return None  # anti-thrash: not straight back at the job that evicted it
        why = f"{r.account} runs {d.over:.0f} GPUs over its entitlement"
        return _Cand((CLASS_RECLAIM, -d.over, lost, jid), "reclaim", why)


def _freeable_hosts(v: VictimView, p: Pend, per: int, owners: set[str], more: Mapping[int, int]) -> list[int]:
    """Nodes where the free GPUs plus every preemptible GPU of the owners ``p`` may take from
    ("" = unallocated work) and ``more`` (yielding jobs' GPUs per node) reach ``per``: an upper
    bound, so no other node can be chosen."""
    pool = v.pool
    free = pool.free
    owned = v.acct.owner_nodes
    maps: list[Mapping[int, int]] = [got for o in owners if (got := owned.get(o))]
    if more:
        maps.append(more)  # yielding jobs, whatever their owner (an upper bound: may count twice)
    ok = pool.host_flags(per, p.spec.gpu_type)  # healthy nodes that can hold ``per``, by node
    # a node qualifies with ``per`` free, or with such GPUs there making up the rest
    out = [i for i in pool.free_at_least(per) if ok[i]]
    if not maps:
        out.sort()
        return out
    # every owner's preemptible GPUs per node they hold some on (one map: that map itself);
    # each node is then looked at once, however many owners' maps hold it
    extra = maps[0]
    if len(maps) > 1:
        extra = dict(extra)
        for m in maps[1:]:
            for i, g in m.items():
                extra[i] = extra.get(i, 0) + g
    for i, g in extra.items():
        f = free[i]
        if f < per <= f + g and ok[i]:
            out.append(i)
    out.sort()
    return out


def _pick_nodes(v: VictimView, p: Pend, n: int, per: int, cands: _Classifier, hosts: list[int]) -> list[str]:
    """The victims on the ``n`` nodes that need the cheapest ones (worst class, then lost work,
    then node order); empty when no ``n`` nodes can be freed."""
    pool = v.pool
    options: list[tuple[tuple[int, float, int], list[str]]] = []
    for i in hosts:
        free = pool.free[i]
        if free >= per:
            options.append(((-1, 0.0, i), []))
            continue
        here = [c.key for j in pool.jobs[i] if (c := cands.get(j)) is not None]  # a list, not a generator (mypyc)
        here.sort()
        chosen: list[str] = []
        worst, cost = -1, 0.0
        for key in here:
            if free >= per:
                break
            chosen.append(key[3])
            free += pool.jobs[i][key[3]]
            worst, cost = max(worst, key[0]), cost + key[2]
        if free >= per:
            options.append(((worst, cost, i), chosen))
    if len(options) < n:
        return []
    options.sort()  # by the key alone: keys end in the node, so no two are equal and no lists are compared
    victims: list[str] = []
    for _, vs in options[:n]:
        for j in vs:
            if j not in victims:
                victims.append(j)
    return victims


def _lowers_distance(v: VictimView, req: str, gpus: int, victims: list[str], owed: Mapping[str, float]) -> bool:
    """Reclaims must strictly lower the summed |running - owed| of the accounts involved."""
    delta: dict[str, int] = {req: gpus}
    reclaim = False
    for j in victims:
        r = v.running[j]
        if not r.allocated:
            continue
        delta[r.account] = delta.get(r.account, 0) - r.gpus
        reclaim = reclaim or r.account != req
    if not reclaim:
        return True
    alloc = v.acct.alloc_gpus
    before = sum(abs(alloc.get(a, 0) - owed.get(a, 0.0)) for a in delta)
    after = sum(abs(alloc.get(a, 0) + d - owed.get(a, 0.0)) for a, d in delta.items())
    return after < before - 1e-9
