"""When no move that takes another account's work can pass the summed-distance check
(``victims._lowers_distance``), known from the accounting before a single node is looked at.

Why: on a Philly-shaped trace most victim searches (56,095 of 71,429 on the 27-day cut, 46,533
of them gangs) pick their victims and then fail that check -- typically a gang whose cheapest
nodes hold one large job of a donor that runs only a little over what it is owed: taking the
whole job overshoots by more than the gang's team gains.  Such a failure depends on ``now``
(through the victims' lost work), so the failed-search memo (``preemption.retry``) cannot keep
it; but whether *any* reclaim could pass depends only on the accounting, so the fast walk asks
this first and, when no reclaim can pass, picks among the other victims alone
(``victims._without_reclaim``).  The reference walk does not ask (``VictimView.memo`` is None).

**Proof** that ``reclaim_futile`` True implies that every victim set with a reclaim victim fails
the check.  It is asked only when no job can be taken as yielding to a reservation (``reserve``
off) nor by debug slicing (no ``debug_end``), so a victim is unallocated work (not counted), the
requester's own allocated work (``within-team``: at most ``own_max`` GPUs, every preemptible
allocated GPU of its team, and none without ``own``), or a donor's allocated work (``reclaim``).
With ``u = owed - alloc`` of the requester, ``g`` its GPUs and ``y`` the own GPUs taken, its
term of ``after - before`` is ``|g - y - u| - |u|`` with ``y`` in ``[0, own_max]``: at least its
minimum over that interval.  A donor ``a`` (running ``over_a > 0`` above what it is owed) that
gives ``x > 0`` GPUs adds ``|over_a - x| - over_a``: at least ``-min(x, over_a) >= -min(pre_a,
over_a)``, and, when its smallest preemptible allocated job ``s_a`` is at least ``over_a``,
at least ``s_a - 2 over_a`` (then ``x >= s_a >= over_a`` and the term is ``x - 2 over_a``).  A
donor that gives nothing adds nothing.  At least one donor gives (a reclaim victim), so the sum
over the donors is at least the sum of the negative bounds, or, if none is negative, the
smallest bound.  If the total bound exceeds the margin, ``after > before + 1e-9`` (the check's
rounding allowance; the margin covers the rounding of both sums for GPU counts below 10^6),
so both of the check's ways to pass are closed.
"""

from __future__ import annotations

from allotment.core.preemption.terms import Terms
from allotment.core.preemption.view import VictimView
from allotment.core.state import Pend

_MARGIN = 1e-6  # per GPU of the sums' scale: far above their rounding, far below one GPU


def reclaim_futile(v: VictimView, p: Pend, t: Terms, owed: dict[str, float], debug_end: float | None) -> bool:
    """True only if no victim set for ``p`` that holds a reclaim victim can pass
    ``victims._lowers_distance`` (module docstring); False also when the bound does not apply
    (no donors, jobs that yield to a reservation or debug slicing possible)."""
    if not t.donors or t.reserve or (t.own and debug_end is not None):
        return False
    acct = v.acct
    alloc, pre = acct.alloc_gpus, acct.alloc_gpus_pre
    req, g = p.account, p.gpus
    u = owed.get(req, 0.0) - alloc.get(req, 0)
    own_max = pre.get(req, 0) if t.own else 0
    d = min(max(u, float(g - own_max)), float(g))  # the requester's change nearest u
    bound = abs(d - u) - abs(u)
    scale = g + abs(u)
    neg = 0.0
    least = -1.0  # the smallest non-negative donor bound (-1: none yet)
    for a, dn in t.donors.items():
        over = dn.over
        m = -min(float(pre.get(a, 0)), over)
        s = _smallest_job(v, a)
        if s >= over and s - 2.0 * over > m:
            m = s - 2.0 * over
        scale += over + s
        if m < 0.0:
            neg += m
        elif least < 0.0 or m < least:
            least = m
    bound += neg if neg < 0.0 else least
    return bound > _MARGIN * (1.0 + scale)


def _smallest_job(v: VictimView, account: str) -> int:
    """The GPUs of ``account``'s smallest preemptible allocated job (0: none), kept in the
    view's memo (the same for every search on one state and inputs)."""
    memo = v.memo
    by: dict[str, int] | None = None
    if memo is not None:
        by = memo.get("smallest_job")
        if by is None:
            by = memo["smallest_job"] = {}
        got = by.get(account)
        if got is not None:
            return got
    ids = v.acct.alloc.get(account)
    out = 0
    if ids:
        running = v.running
        for j in ids:
            k = running[j].gpus
            if out == 0 or k < out:
                out = k
                if k == 1:
                    break
    if by is not None:
        by[account] = out
    return out
