"""Period 0 wakes on usage crossings (issue 25; docs/design/fair-tree.md, "Period 0").

With ``fairshare_period: 0s`` a pass reads window usage at ``now`` itself, so what usage decides
changes *between* events, as charges enter the window and old ones leave its far end: the Fair
Tree order of siblings (``level_value``: usage over share) and the reclaim comparison
(``served_more``: one account's measure above another's by the hysteresis margin).  The
simulator runs a pass only at events and wakes, so without a wake at the instant such a
comparison turns, a reclaim justified at 18,900 s waited for the next event, at 81,000 s.

Between events every account's window usage is linear in time until the window's far end meets
a past charge change (``WindowView.next_break``), and so is any subtree's (a sum) and any measure
(a usage over a fixed entitlement).  Each comparison is then one linear equation: ``next_crossing``
is the first instant a pair of siblings swaps levels or a pair of accounts crosses the reclaim
margin, or the next break, whichever is first.  A pass at a crossing may decide nothing (the
comparison turned where it did not matter); it is never late.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from allotment.core.context import Context

Trend = Callable[[str], tuple[float, float]]  # leaf -> (window GPU-hours now, GPU-hours per second)
AFTER = 1e-6  # seconds past the crossing: the comparison has turned by then


def next_crossing(ctx: Context, trend: Trend, owed: Mapping[str, float], hysteresis: float, now: float,
                  until: float) -> float:
    """The first instant after ``now`` (and no later than ``until``) at which a Fair Tree sibling
    comparison or a reclaim comparison between two accounts changes sign."""
    best = until - now
    sub: dict[str, tuple[float, float]] = {}
    _subtree(ctx, ctx.root, trend, sub)
    for node in ctx.tree.values():
        kids = [(sub[c][0] / s, sub[c][1] / s) for c in node.children if (s := ctx.tree[c].share) > 0]
        for i in range(len(kids)):
            for j in range(i + 1, len(kids)):
                best = _earlier(best, kids[i], kids[j], 1.0)
    m = [(u / e, a / e) for leaf, e in owed.items() if e > 0 for u, a in (trend(leaf),)]
    k = 1.0 + hysteresis
    for i in range(len(m)):
        for j in range(len(m)):
            if i != j:
                best = _earlier(best, m[i], m[j], k)
    return now + best + AFTER if best < math.inf else math.inf


def _earlier(best: float, x: tuple[float, float], y: tuple[float, float], k: float) -> float:
    """``best``, or the time from now at which ``x`` (value, slope) meets ``k`` times ``y`` if
    that is sooner and ahead."""
    gap = x[0] - k * y[0]
    closing = k * y[1] - x[1]
    if closing == 0.0:
        return best
    dt = gap / closing
    return dt if 0.0 < dt < best else best


def _subtree(ctx: Context, name: str, trend: Trend, out: dict[str, tuple[float, float]]) -> tuple[float, float]:
    children = ctx.tree[name].children
    if not children:
        got = trend(name)
    else:
        u = a = 0.0
        for c in children:
            cu, ca = _subtree(ctx, c, trend, out)
            u += cu
            a += ca
        got = (u, a)
    out[name] = got
    return got
