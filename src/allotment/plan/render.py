"""Render a :class:`Plan` as a GitHub comment (Markdown, via the packaged jinja2 template);
``plan_json`` renders the same facts for machines.

All formatting happens here; the template only places pre-formatted cells.  Every string that
came from the configuration goes through :func:`md_escape` (jinja's ``finalize`` hook), so a team
called ``{{ 7*7 }}`` or ``<script>`` is shown as those characters and never evaluated or rendered.
The comment stays under GitHub's 65,536-character limit by halving the longest detail table
until it fits, with an "N more rows" line; the summary is the last thing ever cut.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import jinja2
from markupsafe import Markup

from allotment.durations import format_duration
from allotment.plan.escape import code_escape, md_escape
from allotment.plan.model import FORMAT_VERSION, Plan, Side, TeamImpact

GITHUB_LIMIT = 65_536
MARKER_PREFIX = "<!-- allotment-plan"


@dataclass
class Table:
    """A table shown in the comment: ``rows`` are pre-formatted cells; ``more`` rows were cut."""

    title: str
    header: list[str]
    rows: list[list[str]]
    more: int = 0
    folded: bool = True
    note: str = ""

    def cut(self, keep: int) -> None:
        self.more += len(self.rows) - keep
        self.rows = self.rows[:keep]


@dataclass
class View:
    marker: Markup
    headline: str
    base: str
    head: str
    at: str
    inputs: str
    summary: Table
    impact_summary: Table | None
    overall: list[str]
    impact_note: str
    approvals: list[dict[str, Any]]
    violations: list[str]
    details: list[Table] = field(default_factory=list)


def marker(plan: Plan) -> str:
    """The hidden line the commenting bot looks for.  ``head_time`` lets it refuse to replace a
    comment made for a newer head commit with one from an older run."""
    return (
        f"{MARKER_PREFIX} format={FORMAT_VERSION} base={plan.base.sha or 'worktree'} "
        f"head={plan.head.sha or 'worktree'} head_time={plan.head.committed_unix or 0} "
        f"inputs={plan.head.inputs_sha256} -->"
    )


def _pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def _pp(x: float) -> str:
    return f"{x:+.2f}"


def _hours(x: float) -> str:
    return f"{x:,.0f}"


def _dhours(x: float) -> str:
    return f"{x:+,.0f}"


def _wait(s: float | None) -> str:
    if s is None:
        return "n/a"
    return format_duration(round(s / 60) * 60) if s >= 60 else f"{s:.0f}s"


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _reasons(reasons: tuple[str, ...], limit: int = 6) -> str:
    """A PR that touches 500 teams needs one line per approver group, not 500 reasons."""
    shown = "; ".join(reasons[:limit])
    return shown + (f"; and {len(reasons) - limit} more" if len(reasons) > limit else "")


def _side(s: Side) -> str:
    return f"{s.label} ({s.sha[:12]})" if s.sha else s.label


def _impact_row(t: TeamImpact) -> list[str]:
    return [
        ("⚠️ " if t.flagged else "") + t.team,
        _hours(t.delivered_week_before),
        _hours(t.delivered_week_after),
        _dhours(t.delivered_delta),
        _ratio(t.ratio_before),
        _ratio(t.ratio_after),
        _wait(t.p90_wait_before_s),
        _wait(t.p90_wait_after_s),
    ]


_IMPACT_HEADER = [
    "Team",
    "Delivered GPU-h/week before",
    "after",
    "Δ",
    "Delivered/owed before",
    "after",
    "p90 wait before",
    "after",
]


def build_view(plan: Plan) -> View:
    from allotment.plan.shares import changed

    movers = sorted(
        changed(plan.totals), key=lambda t: (t.delta_pp, t.delta_gpu_hours_week, t.leaf)
    )
    summary = Table(
        "Teams whose share changes (losers first)",
        [
            "Team",
            "Share before",
            "Share after",
            "Δ pp",
            "GPU-h/week before",
            "after",
            "Δ GPU-h/week",
        ],
        [
            [
                t.leaf,
                _pct(t.share_before),
                _pct(t.share_after),
                _pp(t.delta_pp),
                _hours(t.gpu_hours_week_before),
                _hours(t.gpu_hours_week_after),
                _dhours(t.delta_gpu_hours_week),
            ]
            for t in movers
        ],
        folded=False,
    )
    impact_summary = None
    overall: list[str] = []
    impact_note = ""
    details: list[Table] = []
    if plan.impact is not None:
        imp = plan.impact
        names = {t.leaf for t in movers}
        shown = [t for t in imp.teams if t.team in names or t.flagged]
        shown.sort(key=lambda t: (t.delivered_delta, t.team))
        # a simulator that reports no per-team waits gets no column of "n/a"
        waits = any(
            t.p90_wait_before_s is not None or t.p90_wait_after_s is not None for t in imp.teams
        )
        header = _IMPACT_HEADER if waits else _IMPACT_HEADER[:-2]

        def row(t: TeamImpact) -> list[str]:
            cells = _impact_row(t)
            return cells if waits else cells[:-2]

        impact_summary = Table("Projected impact", header, [row(t) for t in shown], folded=False)
        impact_note = (
            f"Same workload ({imp.workload}, {imp.days:g} day{'' if imp.days == 1 else 's'}, "
            f"seed {imp.seed}) simulated under "
            f"both configs; ⚠️ marks a projected drop in delivered hours of more than "
            f"{imp.flag_threshold:.0%}."
        )
        if imp.occupancy_before is not None and imp.occupancy_after is not None:
            overall.append(
                f"occupancy {_pct(imp.occupancy_before)} → {_pct(imp.occupancy_after)} "
                f"({_pp((imp.occupancy_after - imp.occupancy_before) * 100)} pp)"
            )
        if imp.debug_p90_before_s is not None or imp.debug_p90_after_s is not None:
            overall.append(
                f"debug p90 wait {_wait(imp.debug_p90_before_s)} → {_wait(imp.debug_p90_after_s)}"
            )
        details.append(
            Table(
                "Projected impact on every team",
                header,
                [row(t) for t in sorted(imp.teams, key=lambda t: t.team)],
            )
        )
    if plan.diff.nodes:
        details.append(
            Table(
                "Structural diff: budget tree",
                ["Node", "Change", "Before", "After"],
                [[c.node, c.kind, c.before, c.after] for c in plan.diff.nodes],
            )
        )
    if plan.diff.clusters:
        details.append(
            Table(
                "Structural diff: inventory",
                ["Cluster", "Change", "Before", "After"],
                [[c.cluster, c.field, c.before, c.after] for c in plan.diff.clusters],
            )
        )
    if plan.diff.policies:
        details.append(
            Table(
                "Structural diff: policies",
                ["Scope", "Knob", "Before", "After"],
                [[c.scope, c.knob, c.before, c.after] for c in plan.diff.policies],
            )
        )
    details.append(
        Table(
            "Shares per team and cluster",
            ["Team", "Cluster", "Share before", "after", "Δ pp", "GPU-h/week before", "after"],
            [
                [
                    r.leaf,
                    r.cluster,
                    _pct(r.share_before),
                    _pct(r.share_after),
                    _pp(r.delta_pp),
                    _hours(r.gpu_hours_week_before),
                    _hours(r.gpu_hours_week_after),
                ]
                for r in plan.shares
            ],
        )
    )
    statuses = {s.group: s for s in plan.approval_status or ()}
    approvals = []
    for g in plan.approvals:
        st = statuses.get(g)
        approvals.append(
            {
                "node": g.node,
                "owners": ", ".join(g.owners) or "(no owners listed)",
                "reasons": _reasons(g.reasons),
                "author_is_owner": g.author_is_owner,
                "escalated_from": g.escalated_from or "",
                "status": ""
                if st is None
                else ("approved by " + ", ".join(st.approved_by) if st.satisfied else "MISSING"),
            }
        )
    return View(
        marker=Markup(marker(plan)),
        headline=plan.headline,
        base=_side(plan.base),
        head=_side(plan.head),
        at=plan.at.isoformat(),
        inputs=plan.head.inputs_sha256[:16],
        summary=summary,
        impact_summary=impact_summary,
        overall=overall,
        impact_note=impact_note,
        approvals=approvals,
        violations=list(plan.violations),
        details=details,
    )


def _finalize(value: Any) -> Any:
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return Markup(md_escape(value))


@functools.cache
def _environment() -> jinja2.Environment:
    """Built once per process: compiling the template is most of a small render's cost."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("allotment", "templates"),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = lambda s: Markup(code_escape(str(s)))
    return env


def render_markdown(plan: Plan, limit: int = GITHUB_LIMIT) -> str:
    """The comment body, at most ``limit`` characters."""
    template = _environment().get_template("plan.md.j2")
    view = build_view(plan)
    text: str = template.render(v=view)
    while len(text) > limit:
        tables = [t for t in view.details if t.rows]
        if not tables:
            break
        longest = max(tables, key=lambda t: (len(t.rows), t.title))
        longest.cut(len(longest.rows) // 2)
        text = template.render(v=view)
    for summary in (view.impact_summary, view.summary):
        while len(text) > limit and summary is not None and summary.rows:
            summary.cut(len(summary.rows) // 2)
            summary.note = "the summary itself was too long for one comment; see the JSON output"
            text = template.render(v=view)
    return text
