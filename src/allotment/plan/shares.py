"""Absolute shares and weekly entitlements, before and after: the numbers a PR really moves.

A raw share edit in one file changes the absolute share of every leaf below that node and of
its siblings, so reviewers are shown leaves, not edits.  Entitlements are given per week of
reference GPU-hours (whatever the lookback window is) so that a number reads the same in every
comment; percentage points (pp) are absolute-share deltas x 100.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from allotment.compile.model import CompiledConfig

WEEK_S = 7 * 86400


@dataclass(frozen=True, slots=True)
class BeforeAfter:
    """Shares and weekly GPU-hours on the base and head side, and their deltas."""

    share_before: float
    share_after: float
    gpu_hours_week_before: float
    gpu_hours_week_after: float

    @property
    def delta_pp(self) -> float:
        return (self.share_after - self.share_before) * 100.0

    @property
    def delta_gpu_hours_week(self) -> float:
        return self.gpu_hours_week_after - self.gpu_hours_week_before


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareRow(BeforeAfter):
    """One leaf on one cluster; shares are absolute fractions of that cluster."""

    leaf: str
    cluster: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LeafTotal(BeforeAfter):
    """One leaf over every cluster: share of all reference GPU-hours, and weekly hours."""

    leaf: str


def _weekly(config: CompiledConfig, leaf: str, cluster: str) -> tuple[float, float]:
    """(absolute share, reference GPU-hours per week) of ``leaf`` on ``cluster`` (0 if absent)."""
    try:
        node = config.node(leaf)
    except KeyError:
        return 0.0, 0.0
    if not node.leaf or cluster not in config.clusters:
        return 0.0, 0.0
    lookback = config.policy_for(cluster).lookback_s or WEEK_S
    hours = node.entitlement_gpu_hours.get(cluster, 0.0) * WEEK_S / lookback
    return node.absolute.get(cluster, 0.0), hours


def _capacity_week(config: CompiledConfig) -> float:
    total = 0.0
    for name, c in config.clusters.items():
        lookback = config.policy_for(name).lookback_s or WEEK_S
        total += c.reference_gpu_hours_per_window * WEEK_S / lookback
    return total


def share_rows(
    base: CompiledConfig,
    head: CompiledConfig,
    renamed: Iterable[tuple[str, str]] = (),
) -> tuple[ShareRow, ...]:
    """Every (leaf, cluster) with a non-zero share on either side, sorted by leaf then cluster.

    ``renamed`` pairs (base name, head name) so a renamed team shows as one row under its new
    name rather than as one team losing everything and another gaining it.
    """
    old_name = {new: old for old, new in renamed}
    new_names = set(old_name)
    base_leaves = {n.name for n in base.leaves()} - set(old_name.values())
    leaves = sorted(base_leaves | {n.name for n in head.leaves()} | new_names)
    clusters = sorted(set(base.clusters) | set(head.clusters))
    rows = []
    for leaf in leaves:
        for c in clusters:
            sb, hb = _weekly(base, old_name.get(leaf, leaf), c)
            sa, ha = _weekly(head, leaf, c)
            if sb or sa or hb or ha:
                rows.append(
                    ShareRow(
                        leaf=leaf,
                        cluster=c,
                        share_before=sb,
                        share_after=sa,
                        gpu_hours_week_before=hb,
                        gpu_hours_week_after=ha,
                    )
                )
    return tuple(rows)


def leaf_totals(
    base: CompiledConfig, head: CompiledConfig, renamed: Iterable[tuple[str, str]] = ()
) -> tuple[LeafTotal, ...]:
    """Per leaf, summed over clusters; shares are of the total capacity on each side."""
    cap_b, cap_h = _capacity_week(base), _capacity_week(head)
    acc: dict[str, list[float]] = {}
    for r in share_rows(base, head, renamed):
        a = acc.setdefault(r.leaf, [0.0, 0.0])
        a[0] += r.gpu_hours_week_before
        a[1] += r.gpu_hours_week_after
    return tuple(
        LeafTotal(
            leaf=leaf,
            share_before=hb / cap_b if cap_b else 0.0,
            share_after=ha / cap_h if cap_h else 0.0,
            gpu_hours_week_before=hb,
            gpu_hours_week_after=ha,
        )
        for leaf, (hb, ha) in sorted(acc.items())
    )


def changed(totals: tuple[LeafTotal, ...], eps_pp: float = 0.05) -> tuple[LeafTotal, ...]:
    """Leaves whose share moved by at least ``eps_pp`` or whose hours moved by at least one,
    gainers first (largest first), then losers (largest loss last), ties by name."""
    moved = [t for t in totals if abs(t.delta_pp) >= eps_pp or abs(t.delta_gpu_hours_week) >= 1.0]
    return tuple(sorted(moved, key=lambda t: (-t.delta_pp, -t.delta_gpu_hours_week, t.leaf)))


def headline(totals: tuple[LeafTotal, ...], limit: int = 6) -> str:
    """One line a reviewer reads first: ``team-x +4.0 pp (+286 GPU-h/week), team-y -4.0 pp ...``.

    With more than ``limit`` movers the line keeps the largest gains and the largest losses,
    half and half when both sides have enough, then says how many more (the summary table
    below it lists every one).
    """
    moved = list(changed(totals))
    if not moved:
        return "No team's share changes."
    gainers = [t for t in moved if t.delta_pp >= 0]
    losers = [t for t in moved if t.delta_pp < 0]  # largest loss last
    n_gain = min(len(gainers), max(limit // 2, limit - len(losers)))
    n_lose = min(len(losers), limit - n_gain)
    shown = gainers[:n_gain] + (losers[len(losers) - n_lose :] if n_lose else [])
    parts = [
        f"{t.leaf} {t.delta_pp:+.1f} pp ({t.delta_gpu_hours_week:+,.0f} GPU-h/week)" for t in shown
    ]
    rest = len(moved) - len(shown)
    if rest:
        parts.append(f"and {rest} more")
    return ", ".join(parts)
