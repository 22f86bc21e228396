"""Which teams a plan flags: Holm's step-down correction over every team of one plan.

A plan tests every team at once (fifteen on the bundled example).  Each team's own 90% interval
wrongly clears zero one time in twenty on its side, so a plan of fifteen untouched teams flagged
at least one about half the time (issue 26: "untouched teams are flagged in every plan tried").
What a reviewer needs is that a plan with no real drop raises *no* flag, almost always: a bound
on the chance of any false flag per plan, which is a family-wise error rate.  Holm (1979) bounds
it at ``ALPHA`` whatever the teams' dependence (they share one cluster, so their changes are
correlated), and is uniformly more powerful than Bonferroni.  Benjamini-Hochberg bounds the
expected *fraction* of false flags among the flags instead: with one real drop it lets false
flags ride along with it, which is the very complaint.  Why and what was measured: docs/plan.md.
"""

from __future__ import annotations

from collections.abc import Mapping

ALPHA = 0.05  # one-sided: the 90% two-sided interval's own level on the side of a drop


def holm(p_values: Mapping[str, float], alpha: float = ALPHA) -> frozenset[str]:
    """The names whose hypotheses Holm's procedure rejects at family-wise level ``alpha``: walk
    the p-values from smallest up (ties by name), reject the i-th (from 0) while it is at most
    ``alpha / (m - i)``, and stop at the first that is not."""
    ranked = sorted(p_values.items(), key=lambda kv: (kv[1], kv[0]))
    m = len(ranked)
    out = []
    for i, (name, p) in enumerate(ranked):
        if p > alpha / (m - i):
            break
        out.append(name)
    return frozenset(out)
