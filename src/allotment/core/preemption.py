"""Choosing victims for a blocked job (docs/design/preemption.md).

A job that is allocated (minimum runtime > 0) may take GPUs from running jobs that are past their
protection, in this order of preference:

0. ``unallocated``: free work (minimum runtime 0) is preemptible at once by any allocated job;
1. ``within-team``: the same account's jobs of strictly lower declared priority (a team slices
   its own time; strict order means two jobs can never evict each other);
2. ``reclaim``: another account's jobs, only when the requester's account runs less than its
   entitlement, the victim's runs more, the victim's window fair-share metric is worse by the
   hysteresis margin, and the move strictly lowers the total distance of the accounts involved
   from their entitlements.  That last rule is a potential function: every reclaim lowers it, so
   reclaims cannot cycle (no thrash), and a requeued job cannot immediately evict its evictor.

Within a class the least lost work goes first (progress since the last checkpoint x GPUs); among
reclaim victims the most over-served account goes first.  Nodes are chosen to need the cheapest
victims; a gang needs ``n`` such nodes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from allotment.core.state import Pend, Run

if TYPE_CHECKING:
    from allotment.core.scheduler import Scheduler

Victim = tuple[str, str, str]  # (job id, rule, reason)


def lost_work(r: Run, now: float) -> float:
    """Seconds of progress a preemption at ``now`` would throw away."""
    ran = max(0.0, now - r.start)
    if not r.resumable:
        return ran
    ci = r.ckpt
    if ci is None or ci <= 0:
        return 0.0
    return ran - math.floor(ran / ci) * ci


def find_victims(
    s: Scheduler,
    p: Pend,
    n: int,
    per: int,
    now: float,
    ent: Mapping[str, float],
    metric: Mapping[str, float],
) -> tuple[list[Victim], float] | None:
    spec = p.spec
    if s.min_runtime(spec) <= 0:
        return None  # unallocated work only fills what nobody with budget wants
    mode = s.ctx.mode
    pol = s.ctx.policy
    req = spec.account
    pool = s.pool
    keep_nonresumable = pol.non_resumable == "run_to_completion"
    if s._beyond_limit(spec):
        # the old scheduler: work beyond the team's non-preemptible limit only runs on idle GPUs
        return None

    # cheap bound first: could every GPU we might take, plus the free ones, be enough?
    bound = pool.free_gpus() + s.preemptible_unalloc_gpus + s.preemptible_alloc_gpus.get(req, 0)
    reclaim_ok = mode == "budgets" and s.alloc_gpus.get(req, 0) < ent.get(req, 0.0)
    if reclaim_ok:
        bound += s.preemptible_alloc_gpus_total
    if bound < spec.gpus:
        return None
    own = mode == "budgets" and p.declared > 0 and s.preemptible_alloc_gpus.get(req, 0) > 0
    if not reclaim_ok and not own:
        # only unallocated work can yield: the pool's soft-free counts say at once if that helps
        hole, whole, _, _ = pool.capacity_signature()
        if (n == 1 and hole < per) or (n > 1 and per >= pool.max_gpus and whole < n):
            return None
    # which accounts may give up work: a second, tighter bound before looking at single jobs
    donors: dict[str, tuple[float, float]] = {}  # account -> (GPUs over entitlement, metric)
    m_req = metric.get(req, math.inf)
    if reclaim_ok:
        bound -= s.preemptible_alloc_gpus_total
        for acct, ids in s.preemptible_alloc.items():
            if acct == req or not ids:
                continue
            over = s.alloc_gpus.get(acct, 0) - ent.get(acct, 0.0)
            if over <= 0:
                continue
            m_v = metric.get(acct, math.inf)
            if not m_v > m_req * (1.0 + s.ctx.hysteresis) + 1e-12:
                continue
            donors[acct] = (over, m_v)
            bound += s.preemptible_alloc_gpus.get(acct, 0)
        if bound < spec.gpus:
            return None

    running = s.running
    unalloc = s.preemptible_unalloc
    own_ids = s.preemptible_alloc.get(req, {}) if own else {}
    palloc = s.preemptible_alloc
    hyst2 = 1.0 + 2 * s.ctx.hysteresis
    cand: dict[str, tuple[tuple[int, float, float, str], str, str | tuple[str, float]]] = {}

    def classify(vid: str) -> tuple[tuple[int, float, float, str], str, str | tuple[str, float]] | None:
        """The victim's class key, rule and reason, or None if it may not be taken."""
        v = running[vid]
        if v.start >= now:
            return None  # started in this very pass: evicting it would only undo this pass
        if keep_nonresumable and not v.resumable:
            return None
        if vid in unalloc:
            return ((0, 0.0, lost_work(v, now) * v.gpus, vid), "unallocated", UNALLOC_WHY)
        if vid in own_ids and v.declared < p.declared:
            return ((1, 0.0, lost_work(v, now) * v.gpus, vid), "within-team", WITHIN_WHY)
        acct = v.account
        d = donors.get(acct)
        if d is None or vid not in palloc[acct]:
            return None
        if p.evicted_by == vid and not d[1] > m_req * hyst2:
            return None
        return ((2, -d[0], lost_work(v, now) * v.gpus, vid), "reclaim", (acct, d[0]))

    def option(i: int) -> tuple[tuple[int, float, int], list[str]] | None:
        """The cheapest prefix of node ``i``'s victims that frees ``per`` GPUs."""
        free = pool.free[i]
        if free >= per:
            return ((-1, 0.0, i), [])
        here = []
        for v in pool.jobs[i]:
            c = cand.get(v)
            if c is None and v not in cand:
                c = cand[v] = classify(v)  # type: ignore[assignment]
            if c is not None:
                here.append(c[0])
        if free + sum(pool.jobs[i][k[3]] for k in here) < per:
            return None
        here.sort()
        chosen: list[str] = []
        worst = -1
        cost = 0.0
        for key in here:
            chosen.append(key[3])
            free += pool.jobs[i][key[3]]
            worst = key[0] if key[0] > worst else worst
            cost += key[2]
            if free >= per:
                break
        return ((worst, cost, i), chosen)

    pre = s.node_pre
    usable = [i for i in pool.hosts(per, spec.gpu_type) if pool.free[i] + pre[i] >= per]
    if len(usable) < n:
        return None  # not enough nodes hold free plus preemptible GPUs, whatever the classes
    if sum(1 for i in usable if pool.free[i] >= per) >= n:
        return None  # free nodes would be the best options: only a reservation kept it out
    # first only nodes whose free GPUs plus unallocated work suffice: if ``n`` of them need
    # nothing but unallocated victims, no other node can be better (classes order first)
    options = []
    for i in usable:
        if pool.free[i] + pool.soft[i] >= per:
            o = option(i)
            if o is not None and o[0][0] <= 0:
                options.append(o)
    if len(options) < n:
        options = [o for o in map(option, usable) if o is not None]
        if len(options) < n:
            return None
    options.sort(key=lambda o: o[0])
    picked = options[:n]
    victims: list[str] = []
    for _, vs in picked:
        for v in vs:
            if v not in victims:
                victims.append(v)
    if not victims:
        return None
    if not _lowers_distance(s, spec.account, spec.gpus, victims, ent):
        return None
    return (
        [(v, cand[v][1], _why(cand[v][2], spec.id)) for v in victims],
        sum(o[0][1] for o in picked),
    )


def find_cap_victims(s: Scheduler, p: Pend, n: int, per: int, now: float) -> list[str] | None:
    """Victims that make room for ``p`` under the max_gpus caps on its account's path: its own
    team's jobs of strictly lower declared priority that are past their protection, least lost
    work first, until every cap has room and ``n`` nodes have ``per`` GPUs free.  Strictly lower
    priority keeps it free of cycles, as for ``within-team``."""
    keep_nonresumable = s.ctx.policy.non_resumable == "run_to_completion"
    over = s.cap_excess(p.account, p.gpus)
    running = s.running
    own = sorted(
        (lost_work(r, now) * r.gpus, vid)
        for vid in s.preemptible_alloc.get(p.account, {})
        if (r := running[vid]).declared < p.declared
        and r.start < now
        and not (keep_nonresumable and not r.resumable)
    )
    hosts = s.pool.hosts(per, p.spec.gpu_type)
    free = list(s.pool.free)

    def placeable() -> bool:
        return sum(1 for i in hosts if free[i] >= per) >= n

    chosen: list[str] = []
    freed = 0
    for _, vid in own:
        if freed >= over and placeable():
            break
        chosen.append(vid)
        r = running[vid]
        freed += r.gpus
        for i, g in r.placement:
            free[i] += g
    if not chosen or freed < over or not placeable():
        return None
    return chosen


def _lowers_distance(
    s: Scheduler, req: str, gpus: int, victims: list[str], ent: Mapping[str, float]
) -> bool:
    """Reclaims must strictly lower the summed |running - entitlement| of the accounts involved."""
    delta: dict[str, int] = {req: gpus}
    reclaim = False
    for v in victims:
        r = s.running[v]
        if not r.allocated:
            continue
        acct = r.spec.account
        delta[acct] = delta.get(acct, 0) - r.spec.gpus
        if acct != req:
            reclaim = True
    if not reclaim:
        return True
    before = sum(abs(s.alloc_gpus.get(a, 0) - ent.get(a, 0.0)) for a in delta)
    after = sum(abs(s.alloc_gpus.get(a, 0) + d - ent.get(a, 0.0)) for a, d in delta.items())
    return after < before - 1e-9


WITHIN_WHY = "lower within-team priority"
UNALLOC_WHY = "unallocated work yields to allocated work at once"


def _why(why: str | tuple[str, float], for_job: str) -> str:
    """The reason text, built only for victims actually chosen."""
    if isinstance(why, tuple):
        return f"{why[0]} runs {why[1]:.0f} GPUs over its entitlement"
    if why == WITHIN_WHY:
        return f"lower within-team priority than {for_job}"
    return why
