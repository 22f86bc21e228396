"""Render a :class:`Plan` as a GitHub comment (Markdown, via the packaged jinja2 template);
``plan_json`` renders the same facts for machines.

All formatting happens here and in ``render_view``; the template only places pre-formatted
cells.  Every string that came from the configuration goes through :func:`md_escape` (jinja's
``finalize`` hook), so a team called ``{{ 7*7 }}`` or ``<script>`` is shown as those characters.

Size (issue 14, item 4): every section is bounded up front (``render_view``), and if the comment
is still over GitHub's 65,536 characters the longest section is halved until it fits; the
comment then says, near its top, how many rows and items were cut.  A cut table says how many
rows it lost, never "(none)".
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

from allotment.plan.approvals import ApprovalGroup
from allotment.plan.escape import code_escape, md_escape
from allotment.plan.model import FORMAT_VERSION, Impact, Plan, Side
from allotment.plan.render_view import (
    BULLETS,
    Bullets,
    Table,
    View,
    detail_tables,
    estimate_note,
    estimate_tables,
    kind_wait_table,
    overall_text,
    rerun_command,
    skipped_note,
)
from allotment.plan.render_view import _entitlement as entitlement_table
from allotment.plan.verdict import verdict

GITHUB_LIMIT = 65_536
MARKER_PREFIX = "<!-- allotment-plan"


def marker(plan: Plan) -> str:
    """The hidden first line the commenting job looks for.  Which comment is newer is decided
    by the workflow run that posts it (run id and attempt), never by anything in here."""
    return (
        f"{MARKER_PREFIX} format={FORMAT_VERSION} base={plan.base.sha or 'worktree'} "
        f"head={plan.head.sha or 'worktree'} inputs={plan.head.inputs_sha256} -->"
    )


def _side(s: Side) -> str:
    return f"{s.label} ({s.sha[:12]})" if s.sha else s.label


def _e(text: str) -> str:
    return md_escape(text)


def _approvals(plan: Plan) -> Bullets:
    """Markup built here: the data parts escaped one by one, the emphasis kept."""
    statuses = {s.group: s for s in plan.approval_status or ()}
    items: list[str] = []
    for g in plan.approvals:
        st = statuses.get(g)
        reasons = "; ".join(g.reasons[:6]) + (
            f"; and {len(g.reasons) - 6} more" if len(g.reasons) > 6 else ""
        )
        who = "the platform team" if g.node.startswith("(") else f"{_e(g.node)} owners"
        if st is not None and st.satisfied:
            head = f"✅ **{who}**: approved by {_e(', '.join(st.approved_by))}"
        elif not g.owners:
            head = f"⛔ **{who}**: nobody can approve (every owner is an author of this change)"
        else:
            head = f"⏳ **{who}**: one of {_e(', '.join(g.owners))} must approve"
        items.append(Markup(f"{head}, for: {_e(reasons)}{_author_note(g)}"))
    return Bullets(items)


def _author_note(g: ApprovalGroup) -> str:
    """Why someone the reader expects is missing, said after the list so no name sits next to
    it: an author never approves their own change (approvals.py)."""
    if g.escalated_from:
        return (
            f". Escalated from {_e(g.escalated_from)}: every owner of {_e(g.escalated_from)} "
            "is an author of this change"
        )
    if g.author_is_owner:
        return ". Not listed: the owners who are authors of this change (nobody approves their own)"
    return ""


def build_view(plan: Plan) -> View:
    imp = plan.impact
    estimate = kinds = None
    details: list[Table] = []
    note, rerun, overall = skipped_note(plan), "", ""
    if isinstance(imp, Impact):
        estimate, every = estimate_tables(plan, imp)
        kinds = kind_wait_table(imp)
        details.append(every)
        note, rerun, overall = estimate_note(imp), rerun_command(plan, imp), overall_text(imp)
    details.extend(detail_tables(plan))
    teams: list[str] = [
        Markup(
            f"**{_e(t.name)}** under {_e(t.parent or '(root)')}: share {_e(t.share)}; "
            f"owners {_e(', '.join(t.owners) or '(none)')}; "
            f"members {_e(', '.join(t.members) or '(none)')}"
        )
        for t in plan.new_teams
    ]
    new_teams = Bullets(teams)
    view = View(
        verdict=verdict(plan),
        sides=f"Base {_side(plan.base)} → head {_side(plan.head)} · compiled for {plan.at.isoformat()}",
        entitlement=entitlement_table(plan),
        entitlement_note=(
            "Shares of all capacity and reference GPU-hours per week over "
            f"{', '.join(sorted({r.cluster for r in plan.shares})) or 'no cluster'} "
            "(one reference hour = one H100 hour; other GPU types count their billing weight)."
        ),
        estimate_note=note,
        estimate=estimate,
        kinds=kinds,
        rerun=rerun,
        overall=overall,
        approvals=_approvals(plan),
        violations=Bullets(list(plan.violations)),
        new_teams=new_teams,
        details=details,
        rule_changes=Bullets(list(plan.rule_changes)),
    )
    for b in (view.approvals, view.violations, view.new_teams, view.rule_changes):
        b.cut(BULLETS)
    return view


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


def _size(section: Table | Bullets) -> int:
    return len(section.rows) if isinstance(section, Table) else len(section.items)


def _cut_note(view: View) -> str:
    rows = sum(s.more for s in view.sections() if isinstance(s, Table))
    items = sum(s.more for s in view.sections() if isinstance(s, Bullets))
    if not rows and not items:
        return ""
    parts = [f"{rows:,} table rows"] if rows else []
    parts += [f"{items:,} list items"] if items else []
    return Markup(
        f"This comment is cut to fit GitHub's limit: {' and '.join(parts)} not shown; "
        "`allot plan --format json` has every one."
    )


def render_markdown(plan: Plan, limit: int = GITHUB_LIMIT) -> str:
    """The comment body, at most ``limit`` characters."""
    template = _environment().get_template("plan.md.j2")
    view = build_view(plan)
    marker_line = Markup(marker(plan))

    def render() -> str:
        view.cut_note = _cut_note(view)
        text: str = template.render(v=view, marker=marker_line)
        return text

    text = render()
    while len(text) > limit:
        sections = [s for s in view.sections() if _size(s)]
        if not sections:
            break
        longest = max(sections, key=_size)
        longest.cut(_size(longest) // 2)
        text = render()
    return text[:limit]
