"""Victims for an allocated job that does not fit (docs/design/preemption.md).

It may take GPUs from running jobs past their protection, in this order of preference:

0. ``unallocated``: free work (minimum runtime 0) is preemptible at once by any allocated job,
   whatever its place in its queue (``only_unallocated``: the search a non-first candidate gets);
   ``reservation``: a job that started on a reserved node it would overrun, admitted because its
   protection ended before the reservation's start (``Run.yields``, ``core.reservation``), past
   that protection, by the reservation's holder (``reserve``), whatever its account -- the terms
   it was admitted on;
1. ``within-team``: the same account's jobs of strictly lower declared priority, whatever the
   sign (``core.preemption.within_team``: a non-resumable one at most once), unless the pass
   forbids it (``slice_ok``, ``core.preemption.slicing``);
2. ``reclaim``: another account's jobs, only when the requester's account runs less than it is
   owed, the victim's runs more, the victim's reclaim measure (``core.fairshare``) is higher by
   the hysteresis margin, and the move strictly lowers the summed distance of the accounts
   involved from what they are owed.  That last rule is a potential function: every reclaim lowers
   it, so reclaims cannot cycle.  Anti-thrash: a job never evicts the job that evicted it
   (``evicted_by``).  (It could with a doubled margin until issue 25: two jobs then evicted each
   other back and forth on one node -- each move lowered the distance, a start on the GPUs left
   free raised it again.)
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

from allotment.core.placement import NodeFilter
from allotment.core.preemption import debug_slice, gang_sparing, within_team
from allotment.core.preemption.futile_reclaim import reclaim_futile
from allotment.core.preemption.kept_pick import KeptPick
from allotment.core.preemption.terms import Donor, Terms, donors, may_reclaim
from allotment.core.preemption.view import (
    FOR_NOW,
    FOR_NOW_BARE,
    NoVictims,
    Victim,
    VictimView,
    lost_work,
)
from allotment.core.preemption.view import lasting as lasting_failure
from allotment.core.reservation import Unreserved, admitted
from allotment.core.state import Pend

CLASS_UNALLOC, CLASS_YIELD, CLASS_WITHIN, CLASS_RECLAIM, CLASS_DEBUG = 0, 1, 2, 3, 4
YIELD_WHY = "started on a reserved node past the reservation's start; yields to it after its minimum runtime"
WITHIN_WHY = "lower within-team priority"
UNALLOC_WHY = "unallocated work yields to allocated work at once"


class _Cand:
    """A job a search may take.  A plain slotted class, not a frozen dataclass: one is made per
    job a search classifies, and under mypyc a frozen dataclass's ``__init__`` runs as
    interpreted Python (``preemption.retry.SearchState``).  A reclaim victim's reason is written
    only for the victims a search returns (``why``): most classified jobs are never taken."""

    __slots__ = ("account", "key", "over", "reason", "rule")

    def __init__(self, key: tuple[int, float, float, str], rule: str, reason: str, account: str = "",
                 over: float = 0.0) -> None:
        self.key = key  # (class, -GPUs over entitlement, lost GPU-seconds, id)
        self.rule = rule
        self.reason = reason  # a template with {job}; "" for a reclaim: see ``why``
        self.account = account  # a reclaim victim's account, and the GPUs it runs over its entitlement
        self.over = over

    def why(self, requester: str) -> str:
        if self.rule == "reclaim":
            return f"{self.account} runs {self.over:.0f} GPUs over its entitlement"
        return self.reason.format(job=requester)


def find_victims(
    v: VictimView, p: Pend, n: int, per: int, owed: dict[str, float], measure: dict[str, float],
    *, allow: NodeFilter | None = None, slice_ok: bool = True, only_unallocated: bool = False, reserve: bool = False,
    debug_end: float | None = None, keep: list[KeptPick] | None = None,
) -> list[Victim] | NoVictims:
    """The victims whose eviction lets ``p`` start as ``n`` x ``per`` GPUs on nodes ``allow``
    admits, or why there are none (``NoVictims``).  Each ``lasting`` return below implies that
    fewer than ``n`` admitted nodes have free plus takeable GPUs reaching ``per`` (the bounds
    too: one node's free plus takeable GPUs are at most their sum over all nodes).  ``keep``
    (the fast walk's): a pick that fails the distance check is appended to it
    (``kept_pick``)."""
    t = Terms(v, p, owed, measure, slice_ok, only_unallocated, reserve)
    if not t.enough:
        return t.lasting
    donors, own, reserve = t.donors, t.own, t.reserve
    owners = _owners(v, p, t, debug_end)
    if len(owners) == 1 and not reserve and _soft_room(v, per, n, allow) < n:
        # only unallocated work could yield (``owners`` is {""}: no donors, and no own work or
        # none it may take), and fewer than n admitted nodes have room even then
        return t.lasting
    hosts = _freeable_hosts(v, p, per, owners, v.acct.yield_nodes if reserve else {})
    hosts = admitted(hosts, allow)
    if len(hosts) < n:
        return t.lasting  # fewer than n nodes could hold it even if every takeable job there went
    if sum(1 for i in hosts if v.pool.free[i] >= per) >= n:
        return FOR_NOW  # free nodes would be the best options: only a reservation kept them out
    if v.memo is not None and v.spare_gangs < gang_sparing.FIRST and reclaim_futile(v, p, t, owed, debug_end):
        # the fast walk only (futile_reclaim; its proof reads the class order that gang_sparing's ``first`` changes)
        return _without_reclaim(v, p, n, per, t, measure.get(p.account, math.inf), hosts, allow)
    cands = _Classifier(v, p, own, donors, measure.get(p.account, math.inf), reserve, debug_end if own else None)
    chosen: list[tuple[int, int, float, int]] | None = [] if keep is not None else None
    picked = _pick_nodes(v, p, n, per, cands, hosts, chosen)
    if not picked:  # fewer than n nodes can be freed with the jobs it may take (now: gang_sparing.spared)
        return FOR_NOW if cands.spared else t.lasting
    if not _lowers_distance(v, p.account, p.gpus, picked, owed, {j for j in picked if _yielding(cands, j)},
                            p.evicted_by):
        if keep is not None and chosen:
            keep.append(_kept(v, p, t, picked, chosen))
        return FOR_NOW
    out = []
    for j in picked:
        c = cands.get(j)
        assert c is not None
        out.append(Victim(j, c.rule, c.why(p.jid)))
    return out


def still_fails(
    v: VictimView, p: Pend, n: int, per: int, owed: dict[str, float], measure: dict[str, float],
    grown: list[int], was: NoVictims, *, debug_end: float | None, allow: NodeFilter | None = None,
    only_unallocated: bool = False, reserve: bool = False, within: dict[str, Donor] | None = None,
) -> NoVictims | None:
    """The lasting answer ``find_victims`` (same arguments) gives now, if it is sure to give one,
    for a search that failed with the lasting ``was`` on an earlier state since which only the
    nodes ``grown`` (``ClusterState.grown``) grew what is free or takeable, and, if ``was``
    read donors, no account turned donor: ``within``, the donors it read, must hold every donor
    of now (None: the caller knows none turned, ``donor_growth``); None: search again.
    ``debug_end``: ``find_victims``'s (whether ``p`` may slice its own team as a debug job,
    ``_owners``).

    On every other node the free plus takeable GPUs did not grow (a start takes free GPUs; a
    job there that is takeable now was then: the same flags, donors, protection), so they
    still reach ``per`` on fewer than ``n`` of them; if none of ``grown`` reaches it now, the
    search fails as before -- tested first with every preemptible GPU on the node, whoever may
    take it, then with what this search may take (``_freeable_hosts``'s bound).  A requester
    that now runs below what it is owed, where it did not, may take from every donor: search
    again.  Fewer donors than ``within`` cannot make it succeed: a job takeable now is then
    one of an account that was a donor, so it was takeable then (the same flags, protection
    and ``evicted_by``) unless its node grew; what a donor runs over what it is owed and its
    measure order the victims, and a failure that found none is not ordered."""
    reclaim = may_reclaim(v, p, owed, only_unallocated)
    if reclaim and not was.reclaim:
        return None
    if reclaim and within is not None and not _among(donors(v, p.account, owed, measure), within):
        return None  # an account turned donor since
    pool = v.pool
    ok = pool.host_flags(per, p.gpu_type)
    # first with every preemptible GPU there, whoever may take it: no terms needed if none reaches
    free, pre = pool.free, v.acct.pre_on_node
    for i in grown:
        if ok[i] and free[i] + pre[i] >= per and (allow is None or allow(i)):
            return _still_fails_by_terms(v, p, n, per, owed, measure, grown, allow, only_unallocated, reserve,
                                         debug_end)
    return lasting_failure(reclaim)


def _among(now: dict[str, Donor], was: dict[str, Donor]) -> bool:
    """Is every account of ``now`` one of ``was``?  (By identity first: the view's memo hands
    every search of one account on one state the same dict.)"""
    if now is was:
        return True
    for a in now:  # noqa: SIM110 - a loop, not all() over a generator (generic under mypyc)
        if a not in was:
            return False
    return True


def search_donors(v: VictimView, p: Pend, owed: dict[str, float], measure: dict[str, float]) -> dict[str, Donor]:
    """The donors a search for ``p`` on this view reads when it may reclaim (``Terms.donors``;
    the view's memo makes it the very dict the search read): what a lasting failure that read
    donors keeps (``retry.Failure.donors``).  Read only."""
    return donors(v, p.account, owed, measure)


def _soft_room(v: VictimView, per: int, n: int, allow: NodeFilter | None) -> int:
    """At least the healthy nodes ``allow`` admits that have ``per`` GPUs free or held by
    unallocated work, so at least the nodes a search that may take only unallocated work could
    free to ``per`` (``_freeable_hosts`` with the unallocated map alone, then ``admitted``): the
    pool's count (``NodePool.soft_reaching``), less, when that is not already under ``n``, the
    reserved nodes of an ``Unreserved`` filter (a hold's few) that it counts.  Any other filter
    is not read (the pool's count is still a bound).  The reference walk (``VictimView.memo``
    None) keeps the plain search's one test, for one node only, so ``--no-skip`` compares the
    fast walk's counts with the search without them."""
    pool = v.pool
    k = pool.soft_reaching(per)
    if v.memo is None:  # the reference walk: one node only, no filter read (its test before stop 52)
        return k if n == 1 else n
    if k < n or not isinstance(allow, Unreserved):
        return k
    free, soft, healthy = pool.free, pool.soft, pool.healthy
    for i in allow.nodes:
        if healthy[i] and free[i] + soft[i] >= per:
            k -= 1
    return k


def _still_fails_by_terms(v: VictimView, p: Pend, n: int, per: int, owed: dict[str, float],
                          measure: dict[str, float], grown: list[int], allow: NodeFilter | None,
                          only_unallocated: bool, reserve: bool, debug_end: float | None) -> NoVictims | None:
    """``still_fails`` with what this search may take: its first returns, then the grown nodes
    by ``_freeable_hosts``'s bound."""
    t = Terms(v, p, owed, measure, True, only_unallocated, reserve)
    if not t.enough or (not t.donors and not t.own and not t.reserve and v.pool.soft_reaching(per) < n):
        return t.lasting  # the search's own first returns
    maps = _owner_maps(v, p, t, debug_end)
    return None if _a_grown_node_reaches(v, p, per, grown, allow, maps) else t.lasting


def _nodes_reaching(v: VictimView, p: Pend, per: int, nodes: list[int], allow: NodeFilter | None,
                    maps: list[dict[int, int]], first: bool = False) -> list[int]:
    """Those of ``nodes`` (that ``p`` may use) that could reach ``per`` GPUs with their free GPUs
    and every GPU the jobs in ``maps`` (per node) hold there: ``_freeable_hosts``'s bound, read
    by the kept failures on the nodes that grew or were touched since (``still_fails``,
    ``still_bare``, ``still_picks``); with ``first``, only the first such node.  A list, not a
    generator: under mypyc a generator is an object and a call per node (271 M instructions of
    a Philly-shaped 27-day run, stop 44)."""
    ok = v.pool.host_flags(per, p.gpu_type)
    free = v.pool.free
    out: list[int] = []
    for i in nodes:
        if not ok[i] or (allow is not None and not allow(i)):
            continue
        g = free[i]
        for m in maps:
            g += m.get(i, 0)
        if g >= per:
            out.append(i)
            if first:
                break
    return out


def _a_grown_node_reaches(v: VictimView, p: Pend, per: int, grown: list[int], allow: NodeFilter | None,
                          maps: list[dict[int, int]]) -> bool:
    """Could one of the ``grown`` nodes reach ``per`` GPUs (``_nodes_reaching``)?"""
    return bool(_nodes_reaching(v, p, per, grown, allow, maps, True))


def _kept(v: VictimView, p: Pend, t: Terms, picked: list[str], chosen: list[tuple[int, int, float, int]]) -> KeptPick:
    """What ``still_picks`` needs of a pick that failed the distance check."""
    alloc = v.acct.alloc_gpus
    accounts = {p.account}
    for j in picked:
        r = v.running[j]
        if r.allocated:
            accounts.add(r.account)
    return KeptPick(frozenset(k[3] for k in chosen), max(chosen),
                    [(a, d.over) for a, d in t.donors.items()], [(a, alloc.get(a, 0)) for a in sorted(accounts)],
                    t.own, t.reserve)


def still_picks(
    v: VictimView, p: Pend, per: int, owed: dict[str, float], measure: dict[str, float], k: KeptPick,
    changed: list[int], *, allow: NodeFilter | None = None, reserve: bool = False, debug_end: float | None = None,
) -> bool:
    """Is ``find_victims`` (same arguments, the fast walk's view) sure to fail now, for a
    search that picked victims and failed the distance check (``k``) on an earlier state of
    the same pass inputs and debug end, since which only the nodes ``changed`` were touched by
    a start, a stop, a health change or a protection ending (the caller reads those)?
    ``kept_pick`` says why: the same terms and the same accounts moved by the pick; every
    node touched, or holding preemptible work of a donor whose excess is not what it was, is
    not chosen and has a worse option than the worst chosen one -- then the same victims are
    picked and fail the same check.  False: search again."""
    t = Terms(v, p, owed, measure, True, False, reserve)
    if not t.enough:
        return True  # the search's first return
    if t.own != k.own or t.reserve != k.reserve:
        return False
    alloc = v.acct.alloc_gpus
    for a, g in k.allocs:
        if alloc.get(a, 0) != g:
            return False
    nodes = set(changed)
    owned = v.acct.owner_nodes
    donors = t.donors
    for a, over in k.donors:
        d = donors.get(a)
        if d is None or d.over != over:
            nodes.update(owned.get(a, ()))  # its jobs' keys moved, or they are no longer takeable
    was = {a for a, _ in k.donors}  # not by count: one donor may leave as another joins
    for a in donors:
        if a not in was:
            nodes.update(owned.get(a, ()))  # a new donor: its jobs are takeable now
    if not nodes:
        return True
    if not nodes.isdisjoint(k.nodes):
        return False
    maps = _owner_maps(v, p, t, debug_end)
    look = _nodes_reaching(v, p, per, sorted(nodes), allow, maps)  # only nodes that could be freed at all
    if not look:
        return True
    cands = _Classifier(v, p, t.own, donors, measure.get(p.account, math.inf), t.reserve,
                        debug_end if t.own else None)
    return all(key >= k.worst for key, _ in _options(v, per, cands, look, False))


def still_bare(
    v: VictimView, p: Pend, n: int, per: int, owed: dict[str, float], measure: dict[str, float], grown: list[int],
    *, allow: NodeFilter | None = None, reserve: bool = False, debug_end: float | None = None,
) -> NoVictims | None:
    """A failure ``find_victims`` (same arguments, the fast walk's view) is sure to give now,
    for a search that failed with ``FOR_NOW_BARE`` on an earlier state since which only the
    nodes ``grown`` (``ClusterState.grown``) grew what is free or takeable; None: search again.

    Why it holds: ``find_victims`` now either fails before it asks ``reclaim_futile`` (each
    return there is a failure), or asks it; if it answers True (asked again here, on the
    accounting as it is now: donors, what each is owed, who runs what), the answer is
    ``_without_reclaim``'s, which finds victims only if ``n`` nodes can be freed with the
    requester's own and unallocated work alone.  That failed before, and on a node not in
    ``grown`` the free GPUs plus the GPUs of such work did not grow since (a start takes free
    GPUs; a job takeable now that ran then was takeable then: the same flags and protection,
    and ``own`` turns on only when one of the team's jobs turns preemptible, which ``grown``
    records, or starts so, which takes free GPUs), so at most the grown nodes could be freed
    now where they could not then: if none of them reaches ``per`` with the free GPUs and
    every such GPU there (``_freeable_hosts``'s bound, without donors), it still fails."""
    t = Terms(v, p, owed, measure, True, False, reserve)
    if not t.enough:
        return t.lasting  # the search's first return
    if not reclaim_futile(v, p, t, owed, debug_end):
        return None
    maps = _owner_maps(v, p, t, debug_end, donors=False)
    return None if _a_grown_node_reaches(v, p, per, grown, allow, maps) else FOR_NOW_BARE


def _without_reclaim(v: VictimView, p: Pend, n: int, per: int, t: Terms, m_req: float, hosts: list[int],
                     allow: NodeFilter | None) -> list[Victim] | NoVictims:
    """What ``find_victims`` answers when no reclaim can pass the distance check
    (``futile_reclaim.reclaim_futile``; neither reservation nor debug-slice victims possible).

    A node that can be freed without a reclaim victim gets the same option with or without the
    donors (its cheaper victims come first and suffice), and one that cannot needs a reclaim
    victim, a worse class.  So if ``n`` nodes can be freed without one, the search picks the
    same victims as a search without donors, and that set passes the check (no reclaim);
    otherwise its pick holds a reclaim victim and fails the check (``FOR_NOW``) if ``n`` nodes
    can be freed at all, and it finds nothing (its lasting answer) if not.  Only the nodes
    where the requester's own and unallocated work could make room are searched, and the
    others only counted until ``n`` are found."""
    bare = _Classifier(v, p, t.own, {}, m_req, False, None)
    near = _freeable_hosts(v, p, per, _owners(v, p, t, None, donors=False), {})  # (asked only without debug_end)
    near = admitted(near, allow)
    picked = _pick_nodes(v, p, n, per, bare, near) if len(near) >= n else []
    if picked:
        out = []
        for j in picked:
            c = bare.get(j)
            assert c is not None
            out.append(Victim(j, c.rule, c.why(p.jid)))
        return out
    cands = _Classifier(v, p, t.own, t.donors, m_req, False, None)
    return FOR_NOW_BARE if _freeable_count(v, per, cands, hosts, n) >= n else t.lasting


def _owner_maps(v: VictimView, p: Pend, t: Terms, debug_end: float | None, donors: bool = True) -> list[dict[int, int]]:
    """Per node, the preemptible GPUs of each owner the search may take from (``_owners``), and,
    with ``donors``, of the jobs that yield to a reservation when it may take those: the maps
    ``_nodes_reaching`` sums, read by every kept failure's re-read (``_still_fails_by_terms``,
    ``still_picks``, ``still_bare``).  Without ``donors`` (a bare failure: no reclaim can pass,
    and ``futile_reclaim`` holds only without yielding jobs) only its own and unallocated work."""
    owned = v.acct.owner_nodes
    maps = [got for o in _owners(v, p, t, debug_end, donors) if (got := owned.get(o))]
    if donors and t.reserve:
        maps.append(v.acct.yield_nodes)
    return maps


def _owners(v: VictimView, p: Pend, t: Terms, debug_end: float | None, donors: bool = True) -> set[str]:
    """Whose preemptible work the search for ``p`` may take (``Terms.owners``), in the fast walk
    without its own team when none of that work can be a victim: own work is taken only by
    ``within-team`` (strictly lower declared priority) or, for a debug job (``debug_end``), by
    ``debug-slice``, and on an imported trace every job has one priority -- so a team's own
    preemptible work made every node it holds pass ``_freeable_hosts``'s bound, and each such
    search classified every job there to find nothing (stop 44: 17,000 one-GPU searches of the
    Philly-shaped 54-day cut).  The bound stays an upper bound: only GPUs no classification
    could take are left out.  The reference walk (``VictimView.memo`` None) keeps the plain one."""
    out = t.owners(p.account, donors)
    if t.own and debug_end is None and v.memo is not None and _lowest_declared(v, p.account) >= p.declared:
        out.discard(p.account)
    return out


def _lowest_declared(v: VictimView, account: str) -> int:
    """The lowest declared priority of ``account``'s preemptible allocated jobs (none: a value
    no job's priority is below), kept by ``Accounting`` as jobs turn preemptible and stop."""
    return v.acct.lowest_declared(account, _NO_PRIORITY)


_NO_PRIORITY = 1 << 62  # an account without preemptible allocated jobs (``Terms.own`` is then off anyway)


def _freeable_count(v: VictimView, per: int, cands: _Classifier, hosts: list[int], n: int) -> int:
    """How many of ``hosts`` can be freed to ``per`` GPUs with the jobs ``cands`` may take
    (``_options`` lists exactly those), counted up to ``n``."""
    pool = v.pool
    jobs_on = pool.jobs
    pre = v.acct.preemptible
    k = 0
    for i in hosts:
        got = pool.free[i]
        if got < per:
            on = jobs_on[i]
            for j in on:
                if j in pre and cands.get(j) is not None:
                    got += on[j]
                    if got >= per:
                        break
        if got >= per:
            k += 1
            if k >= n:
                break
    return k


def _yielding(cands: _Classifier, jid: str) -> bool:
    c = cands.get(jid)
    return c is not None and c.rule == "reservation"


class _Classifier:
    """The class key, rule and reason of each job ``p`` may take (None: it may not), computed
    the first time a node's jobs are looked at."""

    def __init__(self, v: VictimView, p: Pend, own: bool, donors: dict[str, Donor], m_req: float,
                 reserve: bool, debug_end: float | None) -> None:
        self.v, self.p, self.own, self.donors, self.m_req, self.reserve = v, p, own, donors, m_req, reserve
        self.debug_end = debug_end  # when p, a debug job that may slice its own team, would end
        self.seen: dict[str, _Cand | None] = {}
        self.spared = False  # a larger gang was left out for now (gang_sparing.spared: the form ``wait``)

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
        if v.spare_gangs == gang_sparing.WAIT and gang_sparing.spared(r, p, v.t):
            self.spared = True
            return None
        if r.account == p.account:
            if self.own and within_team.may_take(p.declared, r):
                return _Cand((CLASS_WITHIN, 0.0, lost, jid), within_team.RULE, WITHIN_WHY + " than {job}")
            if self.debug_end is not None and debug_slice.may_take(self.debug_end, p.declared, p.gpus,
                                                                   v.pool.max_gpus, r):
                return _Cand((CLASS_DEBUG, 0.0, lost, jid), debug_slice.RULE, debug_slice.WHY)
            return None
        d = self.donors.get(r.account)
        if d is None:
            return None
        if p.evicted_by == jid:
            return None  # anti-thrash: never straight back at the job that evicted it
        return _Cand((CLASS_RECLAIM, -d.over, lost, jid), "reclaim", "", r.account, d.over)


def _freeable_hosts(v: VictimView, p: Pend, per: int, owners: set[str], more: dict[int, int]) -> list[int]:
    """Nodes where the free GPUs plus every preemptible GPU of the owners ``p`` may take from
    ("" = unallocated work) and ``more`` (yielding jobs' GPUs per node) reach ``per``: an upper
    bound, so no other node can be chosen.  The maps are typed ``dict``, not ``Mapping``: under
    mypyc a ``Mapping``'s ``items``, ``get`` and iteration are generic protocol calls."""
    pool = v.pool
    free = pool.free
    owned = v.acct.owner_nodes
    maps: list[dict[int, int]] = [got for o in owners if (got := owned.get(o))]
    if more:
        maps.append(more)  # yielding jobs, whatever their owner (an upper bound: may count twice)
    ok = pool.host_flags(per, p.gpu_type)  # healthy nodes that can hold ``per``, by node
    # a node qualifies with ``per`` free, or with such GPUs there making up the rest
    out = [i for i in pool.free_at_least(per) if ok[i]]
    if not maps:
        out.sort()
        return out
    # every owner's preemptible GPUs per node they hold some on (one map: that map itself);
    # each node is then looked at once, however many owners' maps hold it
    extra = maps[0]
    if len(maps) > 1:
        extra = extra.copy()  # a dict's own copy, not dict(...) (generic under mypyc)
        for k in range(1, len(maps)):
            for i, g in maps[k].items():
                extra[i] = extra.get(i, 0) + g
    for i, g in extra.items():
        f = free[i]
        if f < per <= f + g and ok[i]:
            out.append(i)
    out.sort()
    return out


def _pick_nodes(v: VictimView, p: Pend, n: int, per: int, cands: _Classifier, hosts: list[int],
                chosen: list[tuple[int, int, float, int]] | None = None) -> list[str]:
    """The victims on the ``n`` nodes that need the cheapest ones (worst class, then lost work,
    then node order); empty when no ``n`` nodes can be freed.  The chosen options' keys are
    appended to ``chosen`` if given.

    For one node (``n == 1``) only the best option matters.  Unallocated work is the cheapest
    class, so the nodes where free GPUs plus unallocated work can make room are looked at first:
    if one of them needs nothing worse, no other node can beat it -- every other node needs a
    job of a worse class (``owner_nodes[""]`` bounds the unallocated GPUs a node can give).
    The fast walk (``VictimView.memo`` set) narrows what a one-node search classifies
    (``_options``'s ``narrow``); the reference classifies every takeable job."""
    narrow = n == 1 and v.memo is not None
    if n == 1:
        unalloc = v.acct.owner_nodes.get("")
        free = v.pool.free
        first = hosts if unalloc is None else [i for i in hosts if free[i] + unalloc.get(i, 0) >= per]
        if first and len(first) < len(hosts):
            options = _options(v, per, cands, first, True, narrow)
            if options and options[0][0][0] <= CLASS_UNALLOC:
                if chosen is not None:
                    chosen.append(options[0][0])
                return options[0][1]
    return _victims_of(_options(v, per, cands, hosts, n == 1, narrow), n, chosen)


def _victims_of(options: list[tuple[tuple[int, int, float, int], list[str]]], n: int,
                chosen: list[tuple[int, int, float, int]] | None) -> list[str]:
    """The victims of the ``n`` best of ``options`` (sorted), each once; empty if there are
    fewer than ``n``.  The chosen options' keys are appended to ``chosen`` if given."""
    if len(options) < n:
        return []
    victims: list[str] = []
    for key, vs in options[:n]:
        if chosen is not None:
            chosen.append(key)
        for j in vs:
            if j not in victims:
                victims.append(j)
    return victims


def _options(v: VictimView, per: int, cands: _Classifier, hosts: list[int],
             cut: bool, narrow: bool = False) -> list[tuple[tuple[int, int, float, int], list[str]]]:
    """Each node of ``hosts`` that can be freed, as ((worst class, gang GPUs broken, lost work,
    node), victims), best first; the gang GPUs are 0, and the class the worst victim's, unless the
    knob ``spare_gangs`` is on (``gang_sparing.option``).  With ``cut`` (only the best is wanted) a node stops being looked at as soon as
    the worst class it needs exceeds the best option's so far: the class only grows as victims
    are added, so its option could only be worse.  (Lost work is not used to cut: it is a float
    that could, by rounding, be a hair below 0.)  With ``cut`` only the best option is returned:
    the keys end in the node, so no two are equal, and the least of them is the first of the
    sorted list (sorting every option took a third of this function in a 3-day ``ai2`` run).

    ``narrow`` (the fast walk's; only with ``cut``): once the best option so far needs no victim
    worse than unallocated work, only a node's unallocated jobs are classified -- its option
    is made of its cheapest keys while their class is at most that, and every allocated job's
    class is worse (``CLASS_UNALLOC`` is the least), so those keys are all a node could use
    (at 8x the ``ai2`` cluster a quarter of the jobs such searches classified were allocated:
    285 a search before, 210 after)."""
    pool = v.pool
    jobs_on = pool.jobs
    pre = v.acct.preemptible  # only these can be taken: the rest is not classified at all
    unalloc = v.acct.unalloc  # the preemptible unallocated jobs (``narrow``)
    options: list[tuple[tuple[int, int, float, int], list[str]]] = []
    spare = v.spare_gangs
    gpus = cands.p.gpus
    running = v.running
    best_worst = CLASS_DEBUG + 1  # with ``cut``: the worst class of the best option so far
    for i in hosts:
        free = pool.free[i]
        if free >= per:
            opt: tuple[tuple[int, int, float, int], list[str]] = ((-1, 0, 0.0, i), [])
            if not cut:
                options.append(opt)
            elif not options or opt[0] < options[0][0]:
                options = [opt]
            best_worst = -1
            continue
        on = jobs_on[i]
        takeable = unalloc if narrow and best_worst <= CLASS_UNALLOC else pre
        here = [c.key for j in on if j in takeable and (c := cands.get(j)) is not None]  # a list, not a generator (mypyc)
        if len(here) > 1:
            here.sort()
        chosen: list[str] = []
        worst, cost = -1, 0.0
        for key in here:
            if free >= per:
                break
            k0 = key[0]
            if cut and k0 > best_worst:
                break  # needs a worse class than the best option: cannot be chosen
            chosen.append(key[3])
            free += on[key[3]]
            worst, cost = max(worst, k0), cost + key[2]
        if free >= per:
            broken = 0
            if spare:
                shift, broken = gang_sparing.option(running, chosen, gpus, spare)
                worst += shift
            okey = (worst, broken, cost, i)
            if not cut:
                options.append((okey, chosen))
            elif not options or okey < options[0][0]:
                options = [(okey, chosen)]
            if worst < best_worst:
                best_worst = worst
    if not cut:
        options.sort()  # by the key alone: keys end in the node, so no two are equal and no lists are compared
    return options


def _lowers_distance(v: VictimView, req: str, gpus: int, victims: list[str], owed: dict[str, float],
                     yielding: set[str], evictor: str | None = None) -> bool:
    """Reclaims must strictly lower the summed |running - owed| of the accounts involved.  Every
    allocated victim counts in the sums, those that yield to a reservation (``yielding``) too:
    leaving one out let a gang that took a ``reservation`` victim and a ``reclaim`` victim of the
    same team pass a check it fails (a team left at 0 of its 8 GPUs while the gang's ran 2x its
    entitlement).  Only a move with a reclaim victim -- another account's job that does not yield
    -- is checked: a job that yields was admitted on those terms, whatever its account.

    **Time-slicing for jobs bigger than their team's entitlement** (docs/design/preemption.md):
    a job of more GPUs than its team is owed overshoots by as much as its victim's team falls
    short, so on a cluster whose allocations are smaller than a node (9 of 13 teams on the
    88-GPU b200) no move could ever strictly lower the distance, and a team's whole-node job
    waited for another's natural end (20 h).  For such a job a move that leaves the distance
    unchanged is enough -- the victims' teams were served more over the window by the hysteresis
    margin (``donors``), so the fair-share balance decides whose turn it is -- except straight
    back at the job that evicted it (``evictor``): no pair evicts each other back and forth."""
    delta: dict[str, int] = {req: gpus}
    reclaim = False
    back = False
    for j in victims:
        r = v.running[j]
        if not r.allocated:
            continue
        delta[r.account] = delta.get(r.account, 0) - r.gpus
        if r.account != req and j not in yielding:
            reclaim = True
            back = back or j == evictor
    if not reclaim:
        return True
    alloc = v.acct.alloc_gpus
    before = sum(abs(alloc.get(a, 0) - owed.get(a, 0.0)) for a in delta)
    after = sum(abs(alloc.get(a, 0) + d - owed.get(a, 0.0)) for a, d in delta.items())
    if after < before - 1e-9:
        return True
    return gpus > owed.get(req, 0.0) and not back and after <= before + 1e-9
