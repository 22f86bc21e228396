"""Victims that make room under a ``max_gpus`` cap (docs/design/preemption.md, "Caps").

A job held back only because its account (or a group above it) is at its cap may take the GPUs of
its own team's jobs of strictly lower declared priority that are past their protection, least
lost work first, until every cap on its path has room and ``n`` nodes have ``per`` GPUs free.
Strictly lower priority keeps it free of cycles, as for ``within-team``.  Only nodes ``allow``
admits may take the job (a reservation it would overrun, ``core.reservation``).
"""

from __future__ import annotations

from allotment.core.placement import NodeFilter
from allotment.core.preemption.view import Victim, VictimView, lost_work
from allotment.core.state import Pend

CAP_WHY = "lower within-team priority than {job}; makes room under the team's max_gpus"


def find_cap_victims(v: VictimView, p: Pend, n: int, per: int, allow: NodeFilter | None = None) -> list[Victim] | None:
    over = v.acct.cap_excess(p.account, p.gpus)
    running = v.running
    own = sorted(
        (lost_work(r, v.t) * r.gpus, jid)
        for jid in v.acct.alloc.get(p.account, {})
        if (r := running[jid]).declared < p.declared and not (v.keep_nonresumable and not r.resumable)
    )
    if not own or sum(running[j].gpus for _, j in own) < over:
        return None  # nothing to take, or not enough even taking all of it
    hosts = v.pool.hosts(per, p.spec.gpu_type)
    if allow is not None:
        hosts = [i for i in hosts if allow(i)]
    free = list(v.pool.free)

    def placeable() -> bool:
        return sum(1 for i in hosts if free[i] >= per) >= n

    chosen: list[str] = []
    freed = 0
    for _, jid in own:
        if freed >= over and placeable():
            break
        chosen.append(jid)
        r = running[jid]
        freed += r.gpus
        for i, g in r.placement:
            free[i] += g
    if not chosen or freed < over or not placeable():
        return None
    return [Victim(j, "within-team", CAP_WHY.format(job=p.jid)) for j in chosen]
