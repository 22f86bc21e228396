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
    if not r.spec.resumable:
        return ran
    ci = r.spec.checkpoint_interval
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
    cand: dict[str, tuple[tuple[int, float, float, str], str, str]] = {}
    keep_nonresumable = pol.non_resumable == "run_to_completion"

    def consider(vid: str, cls: int, over: float, rule: str, why: str) -> None:
        v = s.running[vid]
        if v.start >= now:
            return  # started in this very pass: evicting it would only undo this pass
        if keep_nonresumable and not v.spec.resumable:
            return
        cand[vid] = ((cls, -over, 0.0, vid), rule, why)

    # cheap bound first: could every GPU we might take, plus the free ones, be enough?
    bound = s.pool.free_gpus() + s.preemptible_unalloc_gpus + s.preemptible_alloc_gpus.get(req, 0)
    reclaim_ok = mode == "budgets" and s.alloc_gpus.get(req, 0) < ent.get(req, 0.0)
    if reclaim_ok:
        bound += s.preemptible_alloc_gpus_total
    if bound < spec.gpus:
        return None
    own = mode == "budgets" and p.declared > 0 and s.preemptible_alloc_gpus.get(req, 0) > 0
    if not reclaim_ok and not own:
        # only unallocated work can yield: the pool's soft-free counts say at once if that helps
        hole, whole, _, _ = s.pool.capacity_signature()
        if (n == 1 and hole < per) or (n > 1 and per >= s.pool.max_gpus and whole < n):
            return None

    for vid in s.preemptible_unalloc:
        consider(vid, 0, 0.0, "unallocated", "unallocated work yields to allocated work at once")
    if own:
        for vid in s.preemptible_alloc.get(req, {}):
            if s.running[vid].declared < p.declared:
                consider(vid, 1, 0.0, "within-team", f"lower within-team priority than {spec.id}")
    if reclaim_ok:
        m_req = metric.get(req, math.inf)
        for acct, ids in s.preemptible_alloc.items():
            if acct == req or not ids:
                continue
            over = s.alloc_gpus.get(acct, 0) - ent.get(acct, 0.0)
            if over <= 0:
                continue
            m_v = metric.get(acct, math.inf)
            if not m_v > m_req * (1.0 + s.ctx.hysteresis) + 1e-12:
                continue
            for vid in ids:
                if p.evicted_by == vid and not m_v > m_req * (1.0 + 2 * s.ctx.hysteresis):
                    continue
                consider(vid, 2, over, "reclaim", f"{acct} runs {over:.0f} GPUs over its entitlement")
    if not cand:
        return None
    pool = s.pool
    if sum(s.running[v].spec.gpus for v in cand) + pool.free_gpus() < spec.gpus:
        return None
    # per node: the cheapest prefix of its victims that frees ``per`` GPUs
    options: list[tuple[tuple[int, float, int], list[str]]] = []
    nodes = {i for vid in cand for i, _ in s.running[vid].placement} | {
        i for i in range(len(pool.names)) if pool.healthy[i] and pool.free[i] >= per
    }
    for i in sorted(nodes):
        if not pool.healthy[i] or pool.total[i] < per:
            continue
        if spec.gpu_type is not None and pool.gpu_type[i] != spec.gpu_type:
            continue
        free = pool.free[i]
        chosen: list[str] = []
        worst = -1
        cost = 0.0
        if free < per:
            here = sorted(_costed(cand[v][0], s.running[v], now) for v in pool.jobs[i] if v in cand)
            for key in here:
                v = key[3]
                chosen.append(v)
                free += pool.jobs[i][v]
                worst = max(worst, key[0])
                cost += key[2]
                if free >= per:
                    break
        if free >= per:
            options.append(((worst, cost, i), chosen))
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
    return ([(v, cand[v][1], cand[v][2]) for v in victims], sum(o[0][1] for o in picked))


def _costed(key: tuple[int, float, float, str], r: Run, now: float) -> tuple[int, float, float, str]:
    return (key[0], key[1], lost_work(r, now) * r.spec.gpus, key[3])


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
