"""Victims that make room under a ``max_gpus`` cap (docs/design/preemption.md, "Caps").

A job held back only because its account (or a group above it) is at its cap may take the GPUs of
its own team's jobs of strictly lower declared priority that are past their protection, least
lost work first (with the knob ``spare_gangs``, a gang larger than the job after every other job of
its class, or with ``first`` of either class: ``gang_sparing``), until every cap on its path has room and ``n`` nodes have ``per`` GPUs free.
Strictly lower priority keeps it free of cycles, as for ``within-team``.  A debug job may also
take its team's work of the same priority that would end after it (``debug_end``: when it would
end, None for any other job; ``core.preemption.debug_slice``), after all of the lower-priority
work.  With the debug overdraft admitting by protection (``core.debug_overdraft``, ``yield_to``:
the overdraft when the job's team runs beyond a cap on its path, else None), the team's debug jobs
past their protection that were never evicted come first, whatever their priority (victim rule
``overdraft-yield``).  Only nodes ``allow`` admits may take the job (a reservation it would overrun,
``core.reservation``).
"""

from __future__ import annotations

from allotment.core.debug_overdraft import YIELD_RULE, YIELD_WHY, DebugOverdraft
from allotment.core.placement import NodeFilter
from allotment.core.preemption import debug_slice, gang_sparing, within_team
from allotment.core.preemption.view import Victim, VictimView, lost_work
from allotment.core.state import Pend, Run

CAP_WHY = "lower within-team priority than {job}; makes room under the team's max_gpus"
DEBUG_WHY = debug_slice.WHY + "; makes room under the team's max_gpus"
# the victim classes, in the order a search takes them (``_class``; -1: not a victim)
_YIELD, _WITHIN, _DEBUG = 0, 1, 2


def find_cap_victims(v: VictimView, p: Pend, n: int, per: int, allow: NodeFilter | None = None,
                     debug_end: float | None = None, yield_to: DebugOverdraft | None = None) -> list[Victim] | None:
    over = v.acct.cap_excess(p.account, p.gpus)
    running = v.running
    spare = v.spare_gangs  # knob: a larger gang after every other job of its class, or every job (gang_sparing)
    own: list[tuple[int, int, float, str, int]] = []  # (order, larger gang's GPUs, lost work, id, class)
    takeable = 0  # the GPUs of all of ``own``
    for jid in v.acct.alloc.get(p.account, {}):
        r = running[jid]
        cls = _YIELD if yield_to is not None and yield_to.yields(r, v.pool.max_gpus) else _class(r, p, debug_end, v.pool.max_gpus)
        if cls < 0 or (v.keep_nonresumable and not r.resumable):
            continue
        order, gang = _spared(cls, r, p.gpus, spare)
        own.append((order, gang, lost_work(r, v.t) * r.gpus, jid, cls))
        takeable += r.gpus
    if not own or takeable < over:
        return None  # nothing to take, or not enough even taking all of it
    own.sort()
    hosts = v.pool.hosts(per, p.gpu_type)
    free = list(v.pool.free)
    chosen: list[tuple[int, str]] = []
    freed = 0
    for _, _, _, jid, cls in own:
        if freed >= over and placeable(hosts, free, per, n, allow):
            break
        chosen.append((cls, jid))
        r = running[jid]
        freed += r.gpus
        for i, g in r.placement:
            free[i] += g
    if not chosen or freed < over or not placeable(hosts, free, per, n, allow):
        return None
    return [Victim(j, within_team.RULE, CAP_WHY.format(job=p.jid)) if cls == _WITHIN
            else Victim(j, debug_slice.RULE, DEBUG_WHY.format(job=p.jid)) if cls == _DEBUG
            else Victim(j, YIELD_RULE, YIELD_WHY.format(job=p.jid)) for cls, j in chosen]


def placeable(hosts: list[int], free: list[int], per: int, n: int, allow: NodeFilter | None) -> bool:
    """Do at least ``n`` of ``hosts`` that ``allow`` admits have ``per`` of ``free`` GPUs?  The
    filter is asked only of a node with the GPUs free, not of every host first: a filter is a
    generic call under mypyc, and filtering every host took a third of the cap searches (46 M
    instructions of a 3-day ``ai2`` run).  A module function, not a closure: a nested function
    is an object called generically too.  It stops counting at ``n``."""
    if n <= 0:
        return True
    k = 0
    for i in hosts:
        if free[i] >= per and (allow is None or allow(i)):
            k += 1
            if k >= n:
                return True
    return False


def _spared(cls: int, r: Run, gpus: int, spare: int) -> tuple[int, int]:
    """The order of ``r`` (of class ``cls``) under ``gang_sparing``: (class, raised past every
    class with ``first`` if ``r`` is a larger gang; its GPUs as a larger gang)."""
    if not spare:
        return cls, 0
    g = gang_sparing.gang_gpus(r, gpus)
    return (cls + gang_sparing.AFTER_EVERY_CLASS if g and spare >= gang_sparing.FIRST else cls), g


def _class(r: Run, p: Pend, debug_end: float | None, node_gpus: int) -> int:
    """``_WITHIN``: lower priority (``within-team``), ``_DEBUG``: ``debug-slice``, -1: ``p`` may not take ``r``."""
    if within_team.may_take(p.declared, r):
        return _WITHIN
    return _DEBUG if debug_end is not None and debug_slice.may_take(debug_end, p.declared, p.gpus, node_gpus, r) else -1
