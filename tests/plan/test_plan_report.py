"""``allot plan --report FILE.html``: the budget tree before and after as icicles of shares,
the entitlement moves and the projected impact, in one self-contained file.  Structure tests
(sections, nothing fetched, valid SVG) and the claims the pictures stand for (a node's width is
its absolute share, the same scale before and after; moved nodes are outlined)."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.legible.charts import THIN_PX
from allotment.legible.plan_report import WIDTH, render_plan_report, tree_pair
from allotment.plan.build import PlanRequest, make_plan
from allotment.plan.model import Impact, TeamImpact
from allotment.plan.stats import Interval
from allotment.plan.tree_shares import ClusterTree, NodeShares
from tests.plan.gitrepo import GitRepo
from tests.plan.test_plan_cli import vision_pr

SVG = "{http://www.w3.org/2000/svg}"
SECTIONS = ("summary", "tree", "entitlement", "impact", "approvals")


def _report(repo: GitRepo, tmp_path: Path, *extra: str) -> tuple[int, str]:
    out = tmp_path / "plan.html"
    code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr", "--no-simulate",
                 "--at", "2026-01-02", "--out", str(tmp_path / "plan.md"), "--report", str(out), *extra])
    return code, out.read_text(encoding="utf-8") if out.exists() else ""


def svgs(html: str) -> list[ET.Element]:
    """Every inline SVG, parsed as XML: a malformed one raises."""
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def widths(svg: ET.Element) -> dict[str, float]:
    """node -> drawn width, read back from the cells' tooltips."""
    out = {}
    for rect in svg.iter(f"{SVG}rect"):
        title = rect.find(f"{SVG}title")
        assert title is not None and title.text
        out[title.text.split(":")[0]] = float(rect.get("width", "0"))
    return out


def assert_self_contained(html: str) -> None:
    """No URL but the SVG namespace, no script, no stylesheet or image to fetch."""
    urls = set(re.findall(r"[a-z][a-z0-9+.-]*://[^\s\"'<>)]*", html, flags=re.I))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert not re.search(r"\b(src|href)\s*=", html) and "url(" not in html.replace("url(#", "")
    assert "@import" not in html


def test_plan_report_draws_the_tree_before_and_after_on_one_scale(small_repo: GitRepo, tmp_path: Path) -> None:
    vision_pr(small_repo)  # vision 50 -> 70 of ml (60% of acme): 30% -> 35% of the cluster
    code, html = _report(small_repo, tmp_path)
    assert code == 0 and (tmp_path / "plan.md").exists()  # the comment is still written
    for section in SECTIONS:
        assert f'id="{section}"' in html
    assert_self_contained(html)
    pictures = svgs(html)
    assert len(pictures) == 2  # one cluster (c1): before and after; no impact chart without a simulation
    before, after = (widths(s) for s in pictures)
    assert before["acme"] == after["acme"] == WIDTH  # the root spans the cluster on both sides
    assert before["vision"] == pytest.approx(0.30 * WIDTH, abs=0.1)
    assert after["vision"] == pytest.approx(0.35 * WIDTH, abs=0.1)
    assert after["nlp"] == pytest.approx(0.25 * WIDTH, abs=0.1)
    assert before["ml"] == after["ml"] == pytest.approx(before["vision"] + before["nlp"], abs=0.2)
    outlined = {r.find(f"{SVG}title").text.split(":")[0] for r in pictures[1].iter(f"{SVG}rect")  # type: ignore[union-attr]
                if r.get("class") == "moved"}
    assert outlined == {"vision", "nlp"}  # ml's own share did not move
    assert "vision: 30.0% → 35.0% of c1 (+5.00 pp)" in html
    assert "Not simulated (--no-simulate)." in html
    assert "ml owners: one of ml-deputy@acme.example, ml-lead@acme.example" in html


def test_a_bad_report_path_fails_before_any_work(small_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vision_pr(small_repo)
    code = main(["plan", "--repo", str(small_repo.path), "--base", "main", "--head", "pr", "--no-simulate",
                 "--report", str(tmp_path / "missing" / "plan.html")])
    assert code == 2
    assert "--report" in capsys.readouterr().err


def _impact(teams: tuple[TeamImpact, ...]) -> Impact:
    return Impact("scenario ai2 on c1", "k", "c1", 2.0, (1, 2, 3), teams, 0.8, 0.81,
                  Interval(0.01, 0.0, 0.02, 3), 0.05, 0, 6)


def _team(name: str, low: float, mean: float, high: float, flagged: bool = False) -> TeamImpact:
    return TeamImpact(name, 100.0, 100.0 + mean, Interval(mean, low, high, 3), 1.0, 1.0, 60.0, 90.0, flagged)


def test_projected_impact_is_drawn_as_each_teams_interval(small_repo: GitRepo, tmp_path: Path) -> None:
    vision_pr(small_repo)
    plan = make_plan(PlanRequest(small_repo.path, "main", "pr", dt.date(2026, 1, 2)))
    teams = (_team("vision", 20.0, 40.0, 60.0), _team("nlp", -70.0, -50.0, -30.0, flagged=True),
             _team("infra", -5.0, 1.0, 7.0))  # infra: no share change and not significant
    html = render_plan_report(replace(plan, impact=_impact(teams)))
    assert_self_contained(html)
    chart = svgs(html)[-1]
    assert chart.get("aria-label") == "projected change per team"
    bars = {g.find(f"{SVG}text").text: g for g in chart.iter(f"{SVG}g")}  # type: ignore[union-attr]
    assert set(bars) == {"vision", "nlp"}  # the comment's summary rows: movers and significant teams
    zero = float(next(x for x in chart.iter(f"{SVG}line") if x.get("class") == "zero").get("x1", "nan"))
    for name, g in bars.items():
        line = next(x for x in g.iter(f"{SVG}line"))
        low, high = float(line.get("x1", "nan")), float(line.get("x2", "nan"))
        mean = float(g.find(f"{SVG}circle").get("cx", "nan"))  # type: ignore[union-attr]
        assert low < mean < high
        assert (high < zero) == (name == "nlp")  # a drop whose whole interval is below zero
        assert ("flag" in (line.get("class") or "")) == (name == "nlp")
    assert "c1 occupancy 80.00% → 81.00%" in html


def test_children_too_thin_to_see_are_drawn_as_one_cell_that_counts_them() -> None:
    """3,000 new teams under infra (40% of the cluster): each 0.15 px wide, together one cell."""
    kids = tuple(NodeShares(f"t{i:04d}", None, "infra", 0.0, 0.4 / 3000, True) for i in range(3000))
    tree = ClusterTree("c1", "acme", (
        NodeShares("acme", None, None, 1.0, 1.0, False),
        NodeShares("infra", "acme", "acme", 0.4, 0.4, False),
        NodeShares("ml", "acme", "acme", 0.6, 0.6, True),
        *kids,
    ))
    pair = tree_pair(tree)
    assert 0.4 / 3000 * WIDTH < THIN_PX
    (lump,) = [c for c in pair.after.cells if c.label == "3,000 more"]
    assert lump.w == pytest.approx(0.4 * WIDTH, abs=0.1) and lump.marked  # new nodes are news
    assert len(pair.after.cells) == 4 and len(pair.before.cells) == 3  # acme, infra, ml (+ the lump)
    assert pair.moved[0] == "t0000 0.0% → 0.01% (+0.01 pp)" and len(pair.moved) == 3000
