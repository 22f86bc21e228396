"""The full pending order, with the metrics behind each place: what ``allot explain`` and
``decide()`` report.  Read-only: computed after a pass, from the same inputs and the same scorer
(``core.priority.Scorer``), so asking for it can never change a decision.

``decide()`` computes it on every reconciler tick, from a scheduler it built from the snapshot
that tick (nothing is kept across ticks), so this is the within-team derivation a tick pays
(issue 28, item 5; docs/benchmarks.md).  ``pending_order`` ranks each queue with
``Scorer.ranked`` (a long queue scored over arrays where they pay, ``core.within_team_arrays``)
and merges the queues by their (tier, rank); ``pending_order_by_key`` is the plain reference -- one
``Scorer.total`` per job and one sort of every job's key -- and
``tests/core/test_pending_order.py`` checks that both give the same rows."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from allotment.core.decisions import Ranked
from allotment.core.fairshare import LeafRank
from allotment.core.priority import Scorer
from allotment.core.state import Pend
from allotment.core.tiers import TIER_WHY

if TYPE_CHECKING:
    from allotment.core.scheduler import PassInputs, Scheduler


@dataclass(frozen=True, slots=True)
class Ranking:
    """One queue ranked: its jobs' keys (-score, eligibility, id) and its jobs in that order,
    its tier, the start of its jobs' reason and its account's level fair shares."""

    keys: list[tuple[float, float, str]]
    jobs: list[Pend]
    tier: int
    head: str
    fair: tuple[float, ...]


def pending_order(sched: Scheduler, pi: PassInputs) -> tuple[Ranked, ...]:
    """Every pending job in the order a pass would offer them: tier, Fair Tree rank, score.

    The key is (tier, rank, -score, eligibility, id) and a queue's (tier, rank) is the same for
    all its jobs, so each queue is ranked alone by ``Scorer.ranked`` (its keys are (-score,
    eligibility, id), the score the very ``total``) and the queues are put in (tier, rank)
    order; queues that share one (accounts without a rank) are merged by their keys.  The keys
    end in distinct ids, so this is the one order the reference's sort gives."""
    if not (sched.mode.ranks_queues and sched.mode.scores):
        return pending_order_by_key(sched, pi)
    rank_of = {r.leaf: r for r in pi.ranks}
    scorer = _scorer(sched, pi)
    by_queue: dict[str, list[Pend]] = {}
    for p in sched.state.pending.values():
        got = by_queue.get(p.queue)
        if got is None:
            by_queue[p.queue] = [p]
        else:
            got.append(p)
    by_place: dict[tuple[int, int], list[Ranking]] = {}
    for name, jobs in by_queue.items():
        qk = sched.starting.queue_key(name, pi)
        keys, ranked = scorer.ranked(jobs)
        r = rank_of.get(jobs[0].account)  # one account a queue in this mode
        by_place.setdefault((qk[0], qk[1]), []).append(
            Ranking(keys, ranked, qk[0], _why_head(qk[0], r), r.level_fair_share if r else ()))
    out: list[Ranked] = []
    for place in sorted(by_place):
        runs = by_place[place]
        if len(runs) == 1:  # nearly always: one queue a place, its jobs as ranked, no row made
            q = runs[0]
            tr, head, fair = q.tier, q.head, q.fair
            for k, p in zip(q.keys, q.jobs, strict=True):
                s = -k[0]
                out.append(Ranked(p.jid, p.account, len(out), tr, fair, s, head))
            continue
        merged = heapq.merge(*([(k, i, j) for k, j in zip(q.keys, q.jobs, strict=True)] for i, q in enumerate(runs)))
        for k, i, p in merged:  # keys end in distinct ids: the queue's index and the job are never compared
            q = runs[i]
            s = -k[0]
            out.append(Ranked(p.jid, p.account, len(out), q.tier, q.fair, s, q.head))
    return tuple(out)


def pending_order_by_key(sched: Scheduler, pi: PassInputs) -> tuple[Ranked, ...]:
    """``pending_order`` by its definition: every job's key, one ``Scorer.total`` each, sorted."""
    rank_of = {r.leaf: r for r in pi.ranks}
    scorer = _scorer(sched, pi)
    mode = sched.mode
    rows: list[tuple[tuple[object, ...], Pend, int, LeafRank | None, float]] = []
    for p in sched.state.pending.values():
        qk = sched.starting.queue_key(p.queue, pi)
        s = scorer.total(p) if mode.scores else -p.key[0]
        key = (qk[0], qk[1], -s, p.eligible, p.jid) if mode.ranks_queues else (*p.key, 0, "")
        rows.append((key, p, qk[0], rank_of.get(p.account), s))
    rows.sort(key=lambda x: x[0])
    return _ranked(rows, mode.ranks_queues, mode.name)


def _why_head(tier: int, r: LeafRank | None) -> str:
    """A ranked job's reason up to its score: the same words for every job of a queue."""
    return f"{TIER_WHY[tier]}; fair-share rank {r.rank + 1 if r else '-'}; within-team score "


def _scorer(sched: Scheduler, pi: PassInputs) -> Scorer:
    return Scorer(sched.ctx, pi.t, pi.load, sched.state.pool.max_free(), sched.state.acct.user_gpus, pi.boosts, sched.state.dependants)


def _ranked(rows: Sequence[tuple[object, Pend, int, LeafRank | None, float]], ranks_queues: bool, mode: str) -> tuple[Ranked, ...]:
    """The reference's rows, in order, as ``Ranked`` places with their reasons."""
    out = []
    for pos, (_, p, tr, r, s) in enumerate(rows):
        if ranks_queues:
            why, scored = _why_head(tr, r), True
        else:
            why, scored = f"{mode}: priority {p.declared}, eligible at {p.eligible:.0f}s", False
        out.append(Ranked(p.jid, p.account, pos, tr, r.level_fair_share if r else (), s, why, scored))
    return tuple(out)
