"""Rendering: escaping of hostile strings, every section bounded, the size limit, the marker."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.plan.approvals import required_approvals
from allotment.plan.diff import diff_configs
from allotment.plan.escape import md_escape
from allotment.plan.model import Impact, Plan, Side, TeamImpact
from allotment.plan.render import GITHUB_LIMIT, render_markdown
from allotment.plan.render_view import SUMMARY_ROWS
from allotment.plan.shares import headline, leaf_totals, share_rows
from allotment.plan.stats import Interval
from tests.plan.factory import N, build


def make(base_spec: N, head_spec: N, violations: tuple[str, ...] = ()) -> Plan:
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
        violations,
    )


def many(n: int, bump: int) -> N:
    """``n`` equal teams; team ``bump`` gets as much as all the others together."""
    return N(
        owners=("o@x.org",),
        children={f"team-{i:04d}": N(1 + (i == bump) * (n - 2)) for i in range(n)},
    )


def test_long_comment_is_bounded_and_says_how_much_was_cut() -> None:
    plan = make(many(600, -1), many(600, 7))
    md = render_markdown(plan)
    assert len(md) <= GITHUB_LIMIT
    summary = md.split("<details>", 1)[0]
    # the summary keeps the biggest movers, losers first, and counts the rest
    assert summary.count("| team-") == SUMMARY_ROWS
    assert f"_… {600 - SUMMARY_ROWS} more rows not shown._" in summary
    assert re.search(r"cut to fit GitHub's limit: [\d,]+ table rows", md)
    assert md.startswith("<!-- allotment-plan ")


def test_a_cut_table_never_says_none() -> None:
    violations = tuple(f"share_floor: team-{i:04d} on c1: share drops" for i in range(3000))
    plan = make(many(3000, -1), many(3000, 7), violations)
    md = render_markdown(plan)
    assert len(md) <= GITHUB_LIMIT
    assert "_(none)_" not in md
    assert "more (see `allot plan --format json`)" in md  # the violations list is cut too
    assert "list items" in md.split("####", 1)[0]  # and the top of the comment says so


def test_short_comment_is_not_cut() -> None:
    md = render_markdown(make(many(5, -1), many(5, 2)))
    assert "more rows not shown" not in md and "cut to fit" not in md


def test_small_limit_still_keeps_marker_and_verdict() -> None:
    md = render_markdown(make(many(300, -1), many(300, 3)), limit=20_000)
    assert len(md) <= 20_000
    assert md.startswith("<!-- allotment-plan ") and "### Budget plan: gains: team-0003 +" in md


def test_marker_carries_shas_and_inputs_but_no_author_controlled_time() -> None:
    md = render_markdown(make(many(3, -1), many(3, 1)))
    first = md.splitlines()[0]
    assert re.fullmatch(r"<!-- allotment-plan format=2 base=a{40} head=b{40} inputs=2{64} -->", first)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_escaped_text_has_no_markup(text: str) -> None:
    out = md_escape(text)
    assert "<" not in out and ">" not in out and "\n" not in out and "@" not in out
    # every Markdown-special character is escaped
    assert not re.search(r"(?<!\\)[|`*_\[\]~]", out.replace("\\\\", ""))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_any_owner_text_renders_inside_its_bullet(owner: str) -> None:
    md = render_markdown(
        make(
            N(owners=(owner,), children={"a": N(1), "b": N(1)}),
            N(owners=(owner,), children={"a": N(2), "b": N(1)}),
        )
    )
    approvals = md.split("#### Approvals", 1)[1].split("<details>", 1)[0]
    assert approvals.strip().count("\n- ") == 0  # one bullet, not broken into several
    assert "<" not in approvals.replace("<details>", "")


def _with_impact(plan: Plan, changes: dict[str, Interval]) -> Plan:
    teams = tuple(
        TeamImpact(t.leaf, 100.0, 100.0 + changes[t.leaf].mean, changes[t.leaf], 1.0, 0.9,
                   None, None, flagged=changes[t.leaf].high < -5)
        for t in plan.totals
    )
    imp = Impact("scenario ai2 on c1", "0" * 64, "c1", 7.0, (1, 2, 3), teams, 0.9, 0.8,
                 Interval(-0.1, -0.12, -0.08, 3), 0.05, 0, 6)
    return replace(plan, impact=imp)


def test_estimate_leads_with_share_movers_then_significant_teams_and_folds_the_rest() -> None:
    def tree(a: float) -> N:
        return N(owners=("o@x.org",), children={
            "g": N(2, children={"a": N(a), "b": N(1)}), "c": N(1), "d": N(1)})

    base, head = tree(1), tree(2)
    plan = _with_impact(make(base, head), {
        "a": Interval(20, 10, 30, 3),  # share mover
        "b": Interval(-30, -40, -20, 3),  # share mover (its share drops) and flagged
        "c": Interval(-8, -12, -4, 3),  # no share change, but significant
        "d": Interval(1, -5, 7, 3),  # noise: folded
    })
    md = render_markdown(plan)
    top, folded = md.split("<details>", 1)
    estimate = top.split("#### Projected delivery", 1)[1]
    rows = [r.split("|")[1].strip() for r in estimate.splitlines() if r.startswith("| ") and "Team" not in r and "---" not in r]
    # a flagged team's cell names the line that judged it (tests/plan/test_judged_by.py)
    assert [r.split(" (")[0] for r in rows] == ["⚠️ b", "a", "c"]
    assert "| d |" in folded
    assert "--seeds 1-3" in estimate and "cluster **c1** only" in estimate
    assert "c1 occupancy 90.00% → 80.00%" in estimate
