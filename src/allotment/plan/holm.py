"""Which teams a plan flags: Holm's step-down correction, within the teams the change cuts and,
apart, within the others (``holm_in_families``).

A plan tests every team at once (fifteen on the bundled example).  Each team's own 90% interval
wrongly clears zero one time in twenty on its side, so a plan of fifteen untouched teams flagged
at least one about half the time (issue 26: "untouched teams are flagged in every plan tried").
What a reviewer needs is that a plan with no real drop raises *no* flag, almost always: a bound
on the chance of any false flag per plan, which is a family-wise error rate.  Holm (1979) bounds
it at ``ALPHA`` whatever the teams' dependence (they share one cluster, so their changes are
correlated), and is uniformly more powerful than Bonferroni.  Benjamini-Hochberg bounds the
expected *fraction* of false flags among the flags instead: with one real drop it lets false
flags ride along with it, which is the very complaint.  Why and what was measured: docs/plan.md.

Two families, not one.  The teams whose entitlement the pull request itself lowers (by at least
the flag threshold of it: ``plan/cut_confirmation.py``, which also says the line each family is
judged against) are named by the diff before anything is simulated: hypotheses stated in advance, the ones the reviewer asks
about ("will this cut bite?").  Testing them in one family with every untouched team made the cut
team of a bundled-example plan clear 0.05 / 15 = 0.0033 to be flagged (tulu's -7% at p = 0.0038
was not).  Holm within each family bounds the chance of any false flag among the untouched teams
at ``ALPHA`` exactly as before (what the false-alarm target counts), and among the cut teams at
``ALPHA`` too; a cut team is no longer held to the untouched teams' number.
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


def holm_in_families(p_values: Mapping[str, float], cut: frozenset[str], alpha: float = ALPHA) -> frozenset[str]:
    """Holm at ``alpha`` within the teams in ``cut`` (their entitlement falls under the change),
    and apart within every other team of ``p_values``."""
    return holm({k: v for k, v in p_values.items() if k in cut}, alpha) | holm(
        {k: v for k, v in p_values.items() if k not in cut}, alpha)
