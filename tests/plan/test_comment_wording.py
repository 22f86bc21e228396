"""The comment's words, case by case (issue 26, item 4), each a golden comment with its claims.

Every golden comment is also rendered by a real CommonMark renderer (markdown-it-py, with GFM
tables and raw HTML as GitHub allows them), and the rendered text is checked for entities that
show literally: ``&#x27;`` inside a code span is not decoded by CommonMark, so an HTML-escaped
code span reads as six characters where the reader wrote one.

Regenerate with ``pytest tests/plan/test_comment_wording.py --regen-golden`` and review the diff.
"""

from __future__ import annotations

import datetime as dt
import html.parser
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from allotment.errors import Diagnostic
from allotment.plan.approvals import required_approvals
from allotment.plan.diff import diff_configs
from allotment.plan.failure import render_failure
from allotment.plan.filediff import FieldChange
from allotment.plan.model import Plan, Side
from allotment.plan.render import render_markdown
from allotment.plan.shares import headline, leaf_totals, share_rows
from tests.conftest import assert_golden
from tests.plan.factory import N, build

GOLDEN = Path(__file__).parent / "golden" / "wording"
ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def make(base: N, head: N, authors: Iterable[str] = ("x@y.z",),
         fields: tuple[FieldChange, ...] = ()) -> Plan:
    a, b = build("org", base), build("org", head)
    d = diff_configs(a, b)
    d = type(d)(d.nodes, d.clusters, d.renamed, fields)
    totals = leaf_totals(a, b, d.renamed)
    return Plan(
        Side("main", "a" * 40, "1" * 64, 1), Side("pr", "b" * 40, "2" * 64, 2),
        dt.date(2026, 1, 1), ", ".join(authors), headline(totals), d,
        share_rows(a, b, d.renamed), totals, None,
        required_approvals(a, b, d, list(authors)), None, (),
    )


class _Text(html.parser.HTMLParser):
    """The text a reader sees: character data with entities decoded once, as a browser does."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.code: list[str] = []
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_code += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        self._in_code -= tag == "code"

    def handle_data(self, data: str) -> None:
        self.parts.append(data)
        if self._in_code:
            self.code.append(data)


def rendered(md: str) -> _Text:
    """What GitHub shows: CommonMark + GFM tables, raw HTML allowed (``<details>``)."""
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    text = _Text()
    text.feed(page)
    return text


def check(name: str, md: str, regen: bool) -> str:
    """Golden, and no entity left showing in the rendered text; returns the rendered text."""
    assert_golden(GOLDEN / f"{name}.md", md, regen)
    text = rendered(md)
    shown = "".join(text.parts)
    assert not ENTITY.search(shown), ENTITY.search(shown)
    return shown


def verdict(md: str) -> str:
    line = md.splitlines()[1]
    assert line.startswith("### Budget plan: ")
    return line.removeprefix("### Budget plan: ")


def test_the_largest_move_leads_even_when_it_is_a_loss(regen_golden: bool) -> None:
    md = render_markdown(make(N(owners=("o@x.org",), children={"a": N(4), "b": N(4), "c": N(2)}),
                              N(owners=("o@x.org",), children={"a": N(5), "b": N(2), "c": N(3)})))
    check("largest_loss_leads", md, regen_golden)
    assert verdict(md).startswith("loses: b -20.0 pp (-50% of its budget); gains: a +10.0 pp")


def test_equal_moves_read_gains_first(regen_golden: bool) -> None:
    md = render_markdown(make(N(owners=("o@x.org",), children={"a": N(1), "b": N(1)}),
                              N(owners=("o@x.org",), children={"a": N(3), "b": N(1)})))
    assert verdict(md).startswith("gains: a +25.0 pp (+50% of its budget); loses: b -25.0 pp")


def test_a_rename_and_a_move_read_as_such_and_the_share_move_leads_a_policy_edit(
    regen_golden: bool,
) -> None:
    """A PR that renames a team, moves another and retargets a boost: the +100% move of the
    renamed team leads, the rename and the move are said in words, the boost comes last."""
    base = N(owners=("o@x.org",), children={
        "ml": N(1, owners=("m@x.org",), children={"vision": N(1), "nlp": N(1)}),
        "sci": N(1, owners=("s@x.org",), children={"chem": N(1)})})
    head = N(owners=("o@x.org",), children={
        "ml": N(1, owners=("m@x.org",), children={"perception": N(1)}),
        "sci": N(1, owners=("s@x.org",), children={"chem": N(1), "nlp": N(1)})})
    boost = FieldChange("policies/boosts.yaml", "boosts", "boosts.0.account", "vision", "perception")
    md = render_markdown(make(base, head, fields=(boost,)))
    shown = check("rename_move_boost", md, regen_golden)
    v = verdict(md)
    assert v.startswith("gains: perception +25.0 pp (+100% of its budget); loses: chem -25.0 pp")
    assert "vision renamed to perception, nlp moved from ml to sci" in v
    assert "· blocked: no platform team is listed (platform_team in policies/scheduler.yaml)" in shown
    assert v.index("renamed") < v.index("boosts.0.account (boosts) vision → perception")
    assert "nlp" not in v.split(";")[0] + v.split(";")[1]  # a move that keeps its share is no mover


def test_a_rename_alone_is_said_in_words(regen_golden: bool) -> None:
    md = render_markdown(make(N(owners=("o@x.org",), children={"vision": N(1), "nlp": N(1)}),
                              N(owners=("o@x.org",), children={"perception": N(1), "nlp": N(1)})))
    assert verdict(md) == "vision renamed to perception · needs approval from org owners"


def test_a_new_team_reads_as_new(regen_golden: bool) -> None:
    md = render_markdown(make(N(owners=("o@x.org",), children={"a": N(1), "b": N(1)}),
                              N(owners=("o@x.org",), children={"a": N(1), "b": N(1), "c": N(2)})))
    check("new_team", md, regen_golden)
    v = verdict(md)
    assert v.startswith("gains: c +50.0 pp (new team); loses: a -25.0 pp (-50% of its budget)")
    assert "new of its budget" not in md
    removed = render_markdown(make(N(owners=("o@x.org",), children={"a": N(1), "b": N(1), "c": N(2)}),
                                   N(owners=("o@x.org",), children={"a": N(1), "b": N(1)})))
    assert verdict(removed).startswith("loses: c -50.0 pp (removed: all of its budget); gains:")


def test_an_author_who_owns_the_node_is_never_named_next_to_the_approvers(regen_golden: bool) -> None:
    md = render_markdown(make(N(owners=("rosa@x.org", "bob@x.org"), children={"a": N(1), "b": N(1)}),
                              N(owners=("rosa@x.org", "bob@x.org"), children={"a": N(2), "b": N(1)}),
                              authors=("rosa@x.org",)))
    shown = check("author_is_owner", md, regen_golden)
    approvals = shown.split("Approvals", 1)[1]
    assert "org owners: one of bob@x.org must approve, for: share of a; share of b." in approvals
    assert "Not listed: the owners who are authors of this change" in approvals
    assert "rosa" not in approvals  # nothing in the line can be read as "rosa is the author"


def test_an_escalation_names_the_node_not_a_person(regen_golden: bool) -> None:
    tree = {"team": N(1, owners=("rosa@x.org",), children={"a": N(1), "b": N(1)}), "c": N(1)}
    head = {"team": N(1, owners=("rosa@x.org",), children={"a": N(2), "b": N(1)}), "c": N(1)}
    md = render_markdown(make(N(owners=("bob@x.org",), children=tree),
                              N(owners=("bob@x.org",), children=head), authors=("rosa@x.org",)))
    shown = check("escalated", md, regen_golden)
    approvals = shown.split("Approvals", 1)[1]
    assert "org owners: one of bob@x.org must approve" in approvals
    assert "Escalated from team: every owner of team is an author of this change" in approvals


def test_the_invalid_push_comment_shows_quotes_and_brackets_as_written(regen_golden: bool) -> None:
    message = "share must be a number > 0, got 'ten' & <b>more</b>"
    md = render_failure([Diagnostic("budgets/acme/ml/budget.yaml", 3, 19, message)], "pr")
    check("invalid_push", md, regen_golden)
    code = rendered(md).code
    assert f"budgets/acme/ml/budget.yaml:3:19: {message}" in code


def test_an_html_comment_marker_cannot_be_closed_by_a_ref_name() -> None:
    md = render_failure([], "x --> <img src=y>")
    first = md.splitlines()[0]
    assert first.endswith(" -->") and first.count("-->") == 1 and "<img" not in first


@pytest.mark.parametrize("owner", ["o'brien@x.org", "a&b@x.org", "<x>@x.org"])
def test_owner_text_shows_as_written_after_rendering(owner: str) -> None:
    md = render_markdown(make(N(owners=(owner,), children={"a": N(1), "b": N(1)}),
                              N(owners=(owner,), children={"a": N(2), "b": N(1)})))
    shown = "".join(rendered(md).parts)
    assert f"one of {owner} must approve" in shown and not ENTITY.search(shown)


def test_every_checked_in_comment_renders_without_a_literal_entity() -> None:
    """The other golden comments and the managers' guide's example, as GitHub shows them."""
    comments = [p.read_text(encoding="utf-8") for p in sorted(GOLDEN.parent.rglob("*.md"))]
    guide = (Path(__file__).parents[2] / "docs" / "managers-guide.md").read_text(encoding="utf-8")
    comments.append(guide.split("<!-- BEGIN EXAMPLE COMMENT", 1)[1].split("<!-- END EXAMPLE", 1)[0])
    assert len(comments) >= 8
    for md in comments:
        shown = "".join(rendered(md).parts)
        assert not ENTITY.search(shown), ENTITY.search(shown)
