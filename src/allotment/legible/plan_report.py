"""``allot plan --report FILE.html``: a budget change as pictures, one self-contained file.

The budget tree of each cluster as two icicles of absolute shares, before above after on the
same scale (a node's width is its share of the cluster, so a slice that grew is visibly wider;
nodes whose share moved are outlined), then the teams whose entitlement moved, then the
projected impact when the plan simulated one: each team's paired change in delivered GPU-hours
with its 90% interval as a bar (flagged teams in red).  Every number comes from the
:class:`~allotment.plan.model.Plan` the comment and the JSON are rendered from, and the tables
reuse the comment's own cells (``plan.render_view``), so the three can never disagree.  Inline
SVG, no script, nothing fetched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jinja2

from allotment.legible.charts import Cell, icicle_of
from allotment.legible.colors import node_colors
from allotment.plan.model import Impact, Plan, Side
from allotment.plan.render_view import Table, estimate_tables, overall_text, seeds_text
from allotment.plan.render_view import _entitlement as entitlement_table
from allotment.plan.shares import changed
from allotment.plan.tree_shares import ClusterTree
from allotment.plan.verdict import verdict

WIDTH, ROW_H = 1100.0, 40.0
MOVED_PP = 0.05  # a node whose absolute share moved by this many points or more is outlined
FOREST_ROWS = 60
LIST_ROWS = 10  # rules broken, approvals: the page is for the pictures; the JSON lists every one


@dataclass(frozen=True, slots=True)
class Icicle:
    title: str
    cells: tuple[Cell, ...]
    height: float


@dataclass(frozen=True, slots=True)
class TreePair:
    cluster: str
    before: Icicle
    after: Icicle
    moved: tuple[str, ...]  # "pretrain 40.0% → 45.0% (+5.0 pp)", largest move first


@dataclass(frozen=True, slots=True)
class Bar:
    y: float
    team: str
    low: float  # x of the interval's ends and of the mean
    high: float
    mean: float
    flagged: bool
    title: str


@dataclass(frozen=True, slots=True)
class Forest:
    bars: tuple[Bar, ...]
    zero: float
    height: float
    ticks: tuple[tuple[float, str], ...]
    more: int


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if x >= 0.001 or x == 0 else f"{100 * x:.2f}%"


def tree_pair(tree: ClusterTree) -> TreePair:
    before_parents = {n.name: n.parent_before for n in tree.nodes if n.absolute_before > 0}
    after_parents = {n.name: n.parent_after for n in tree.nodes if n.absolute_after > 0}
    every = {n.name: n.parent_after if n.absolute_after > 0 else n.parent_before for n in tree.nodes}
    colors = node_colors(every, [n.name for n in tree.nodes if n.leaf])
    # moved: by MOVED_PP or more, or added or removed however small (a sliver is news too)
    moved = sorted((n for n in tree.nodes if abs(n.delta_pp) >= MOVED_PP or (n.absolute_before > 0) != (n.absolute_after > 0)),
                   key=lambda n: (-abs(n.delta_pp), n.name))
    marked = frozenset(n.name for n in moved)
    order = {n.name: i for i, n in enumerate(tree.nodes)}  # the head's pre-order: each node keeps its place
    titles = {
        n.name: f"{n.name}: {_pct(n.absolute_before)} → {_pct(n.absolute_after)} of {tree.cluster} ({n.delta_pp:+.2f} pp)"
        for n in tree.nodes
    }

    def side(title: str, parents: dict[str, str | None], absolute: dict[str, float]) -> Icicle:
        cells, height = icicle_of(parents, absolute, colors, titles=titles, marked=marked, order=order,
                                  width=WIDTH, row_h=ROW_H)
        return Icicle(title, cells, height)

    return TreePair(
        tree.cluster,
        side("before", before_parents, {n.name: n.absolute_before for n in tree.nodes}),
        side("after", after_parents, {n.name: n.absolute_after for n in tree.nodes}),
        tuple(f"{n.name} {_pct(n.absolute_before)} → {_pct(n.absolute_after)} ({n.delta_pp:+.2f} pp)" for n in moved),
    )


def forest(plan: Plan, imp: Impact, width: float = 700.0, row_h: float = 18.0) -> Forest:
    """The share movers and the significant teams (the comment's summary rows), one bar each."""
    movers = {t.leaf for t in changed(plan.totals)}
    teams = [t for t in imp.teams if t.team in movers or t.significant or t.flagged]
    teams.sort(key=lambda t: (t.change.mean, t.team))
    shown, more = teams[:FOREST_ROWS], max(0, len(teams) - FOREST_ROWS)
    span = max([abs(v) for t in shown for v in (t.change.low, t.change.high)] + [1.0]) * 1.1

    def x(v: float) -> float:
        return round(width / 2 + v / span * width / 2, 1)

    bars = tuple(
        Bar(i * row_h, t.team, x(t.change.low), x(t.change.high), x(t.change.mean), t.flagged,
            f"{t.team}: {t.change.mean:+,.0f} GPU-h/week (90% interval {t.change.low:+,.0f} to {t.change.high:+,.0f})")
        for i, t in enumerate(shown)
    )
    ticks = tuple((x(v), f"{v:+,.0f}" if v else "0") for v in (-span / 1.1, -span / 2.2, 0.0, span / 2.2, span / 1.1))
    return Forest(bars, x(0.0), len(shown) * row_h, ticks, more)


def _approvals(plan: Plan) -> list[str]:
    done = {s.group: s for s in plan.approval_status or ()}
    out = []
    for g in plan.approvals:
        who = "the platform team" if g.node.startswith("(") else f"{g.node} owners"
        st = done.get(g)
        if st is not None and st.satisfied:
            state = f"approved by {', '.join(st.approved_by)}"
        elif not g.owners:
            state = "nobody can approve (every owner is an author of this change)"
        else:
            state = f"one of {', '.join(g.owners)}"
        out.append(f"{who}: {state}; for {'; '.join(g.reasons)}")
    return out


def _side(s: Side) -> str:
    return f"{s.label} ({s.sha[:12]})" if s.sha else s.label


def plan_report_context(plan: Plan) -> dict[str, Any]:
    imp = plan.impact if isinstance(plan.impact, Impact) else None
    trees = sorted(plan.trees, key=lambda t: (imp is None or t.cluster != imp.cluster, t.cluster))
    estimate: Table | None = estimate_tables(plan, imp)[0] if imp else None
    return {
        "plan": plan, "verdict": verdict(plan),
        "base": _side(plan.base), "head": _side(plan.head),
        "trees": [tree_pair(t) for t in trees], "width": WIDTH,
        "entitlement": entitlement_table(plan),
        "impact": imp, "estimate": estimate, "overall": overall_text(imp) if imp else "",
        "forest": forest(plan, imp) if imp else None, "seeds": seeds_text(imp.seeds) if imp else "",
        "skipped": getattr(plan.impact, "reason", "") if imp is None else "",
        "approvals": _approvals(plan)[:LIST_ROWS], "approvals_more": max(0, len(plan.approvals) - LIST_ROWS),
        "violations": plan.violations[:LIST_ROWS], "violations_more": max(0, len(plan.violations) - LIST_ROWS),
    }


def render_plan_report(plan: Plan) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("allotment", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
    )
    return env.get_template("plan_report.html.j2").render(**plan_report_context(plan))
