"""Rendering: escaping of hostile strings, the size limit, the marker."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.plan.approvals import required_approvals
from allotment.plan.diff import diff_configs
from allotment.plan.escape import md_escape
from allotment.plan.model import Plan, Side
from allotment.plan.render import GITHUB_LIMIT, render_markdown
from allotment.plan.shares import headline, leaf_totals, share_rows
from tests.plan.factory import N, build


def make(base_spec: N, head_spec: N) -> Plan:
    a, b = build("org", base_spec), build("org", head_spec)
    d = diff_configs(a, b)
    totals = leaf_totals(a, b, d.renamed)
    return Plan(
        Side("main", "a" * 40, "1" * 64, 1),
        Side("pr", "b" * 40, "2" * 64, 2),
        dt.date(2026, 1, 1),
        "x@y.z",
        headline(totals),
        d,
        share_rows(a, b, d.renamed),
        totals,
        None,
        required_approvals(a, b, d, ["x@y.z"]),
        None,
        (),
    )


def many(n: int, bump: int) -> N:
    """``n`` equal teams; team ``bump`` gets as much as all the others together."""
    return N(
        owners=("o@x.org",),
        children={f"team-{i:04d}": N(1 + (i == bump) * (n - 2)) for i in range(n)},
    )


def test_long_comment_is_cut_in_detail_tables_and_keeps_summary_and_losers() -> None:
    plan = make(many(600, -1), many(600, 7))
    md = render_markdown(plan)
    assert len(md) <= GITHUB_LIMIT
    assert "more rows not shown" in md
    summary = md.split("<details>", 1)[0]
    # every other team loses half its share: all 599 losers and the gainer stay in the summary
    assert summary.count("| team-") == 600
    assert md.startswith("<!-- allotment-plan ")


def test_short_comment_is_not_cut() -> None:
    md = render_markdown(make(many(5, -1), many(5, 2)))
    assert "more rows not shown" not in md


def test_small_limit_still_keeps_marker_and_headline() -> None:
    md = render_markdown(make(many(300, -1), many(300, 3)), limit=20_000)
    assert len(md) <= 20_000
    assert md.startswith("<!-- allotment-plan ") and "### Budget plan: team-0003 +" in md


def test_marker_carries_shas_and_inputs() -> None:
    md = render_markdown(make(many(3, -1), many(3, 1)))
    first = md.splitlines()[0]
    assert re.fullmatch(
        r"<!-- allotment-plan format=1 base=a{40} head=b{40} head_time=2 inputs=2{64} -->", first
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_escaped_text_has_no_markup(text: str) -> None:
    out = md_escape(text)
    assert "<" not in out and ">" not in out and "\n" not in out and "@" not in out
    # every Markdown-special character is escaped
    assert not re.search(r"(?<!\\)[|`*_\[\]~]", out.replace("\\\\", ""))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_any_owner_text_renders_inside_its_table_cell(owner: str) -> None:
    md = render_markdown(
        make(
            N(owners=(owner,), children={"a": N(1), "b": N(1)}),
            N(owners=(owner,), children={"a": N(2), "b": N(1)}),
        )
    )
    approvals = md.split("#### Approvals needed", 1)[1].split("<details>", 1)[0]
    assert approvals.strip().count("\n- ") == 0  # one bullet, not broken into several
    assert "<" not in approvals.replace("<details>", "")


def _with_impact(plan: Plan, wait: float | None) -> Plan:
    from dataclasses import replace

    from allotment.plan.model import Impact, TeamImpact

    teams = tuple(
        TeamImpact(t.leaf, 100.0, 90.0, 1.0, 0.9, wait, wait, flagged=True) for t in plan.totals
    )
    imp = Impact("scenario x", "0" * 64, 1.0, 0, teams, 0.9, 0.8, 60.0, 120.0, 0.05, (False, False))
    return replace(plan, impact=imp)


def test_impact_table_shows_waits_only_when_the_simulator_reports_them() -> None:
    plan = make(many(3, -1), many(3, 1))
    without = render_markdown(_with_impact(plan, None))
    assert "p90 wait before" not in without
    assert "⚠️ team-0000" in without.split("<details>", 1)[0]  # flagged losers are never folded
    assert "debug p90 wait 1m → 2m" in without
    assert "p90 wait before" in render_markdown(_with_impact(plan, 600.0))
