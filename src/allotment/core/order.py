"""The full pending order, with the metrics behind each place: what ``allot explain`` and
``decide()`` report.  Read-only: computed after a pass, from the same inputs and the same scorer
(``core.priority.Scorer``), so asking for it can never change a decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

from allotment.core.decisions import Ranked
from allotment.core.priority import Scorer
from allotment.core.tiers import TIER_WHY

if TYPE_CHECKING:
    from allotment.core.scheduler import PassInputs, Scheduler


def pending_order(sched: Scheduler, pi: PassInputs) -> tuple[Ranked, ...]:
    """Every pending job in the order a pass would offer them: tier, Fair Tree rank, score."""
    rank_of = {r.leaf: r for r in pi.ranks}
    scorer = Scorer(sched.ctx, pi.t, pi.load, sched.pool.max_free(), sched.acct.user_gpus, pi.boosts,
                    sched.dependants)
    mode = sched.mode
    rows = []
    for p in sched.pending.values():
        qk = sched.queue_key(p.queue, pi)
        s = scorer.total(p) if mode.scores else -p.key[0]
        key = (qk[0], qk[1], -s, p.eligible, p.jid) if mode.ranks_queues else (*p.key, 0, "")
        rows.append((key, p, qk[0], rank_of.get(p.account), s))
    rows.sort(key=lambda x: x[0])
    out = []
    for pos, (_, p, tr, r, s) in enumerate(rows):
        if mode.ranks_queues:
            why = f"{TIER_WHY[tr]}; fair-share rank {r.rank + 1 if r else '-'}; within-team score {s:.3f}"
        else:
            why = f"{mode.name}: priority {p.declared}, eligible at {p.eligible:.0f}s"
        out.append(Ranked(p.jid, p.account, pos, tr, r.level_fair_share if r else (), s, why))
    return tuple(out)
