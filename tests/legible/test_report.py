"""``allot report``: sections, nothing fetched from the network, every SVG well-formed, the
pictures draw what the event log holds (one red edge per preemption, hatching only for
unallocated runs, the baseline beside)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.legible.replay import intervals
from allotment.legible.report import render_report
from allotment.legible.rundir import read_run

SVG_NS = "http://www.w3.org/2000/svg"


@pytest.fixture(scope="module")
def html(run_dir: Path, base_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "r.html"
    assert main(["report", "--run", str(run_dir), "--baseline", str(base_dir), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def _path_bars(group: ET.Element) -> int:
    """Bars drawn as subpaths of the group's path (one 'M' each)."""
    return sum((p.get("d") or "").count("M") for p in group.iter(f"{{{SVG_NS}}}path"))


def test_report_has_every_section(html: str) -> None:
    for section in ("summary", "timeline", "teams", "waits", "tree"):
        assert f'id="{section}"' in html
    assert html.count("<h3>") == 2 and "<h3>baseline: priority</h3>" in html


def test_report_fetches_nothing(html: str) -> None:
    urls = set(re.findall(r"[a-z][a-z0-9+.-]*://[^\s\"'<>)]+", html, flags=re.I))
    assert urls == {SVG_NS}  # the SVG namespace name, never fetched
    assert not re.search(r"<(script|link|img|iframe|object)\b", html)
    assert "@import" not in html and "url(http" not in html


def test_every_svg_is_well_formed_xml(html: str) -> None:
    svgs = _svgs(html)
    assert len(svgs) >= 2 + 4 + 1
    assert all(s.tag == f"{{{SVG_NS}}}svg" for s in svgs)


def test_timeline_draws_each_preemption_and_hatches_only_unallocated_runs(html: str, run_dir: Path) -> None:
    rd = read_run(run_dir)
    ivs = intervals(rd.events, rd.end)
    timeline = _svgs(html)[0]
    edges = timeline.find(f"{{{SVG_NS}}}path[@class='pe']")
    assert edges is not None
    drawn = edges.get("d", "").count("M")
    preempted_runs = [iv for iv in ivs if iv.preempted]
    assert len(preempted_runs) == sum(1 for e in rd.events if e.event == "preempt")
    assert len(preempted_runs) <= drawn <= sum(len(iv.nodes) for iv in preempted_runs)
    groups = [g for g in timeline.iter(f"{{{SVG_NS}}}g") if (g.get("class") or "")[:1] in ("t", "h")]
    hatched = [r for g in groups if g.get("class", "").startswith("h") for r in g.iter(f"{{{SVG_NS}}}rect")]
    unalloc = [iv for iv in ivs if not iv.allocated]
    n_hatched = len(hatched) + sum(_path_bars(g) for g in groups if g.get("class", "").startswith("h"))
    assert unalloc and len(unalloc) <= n_hatched <= sum(len(iv.nodes) for iv in unalloc)
    titles = [t.text or "" for r in hatched for t in r.iter(f"{{{SVG_NS}}}title")]
    assert titles and all("unallocated" in t for t in titles)
    plain = [t.text or "" for g in groups if g.get("class", "").startswith("t") for t in g.iter(f"{{{SVG_NS}}}title")]
    assert plain and not any("unallocated" in t for t in plain)


@pytest.mark.slow
def test_a_thousand_gpu_month_stays_small_and_draws_groups_of_nodes(tmp_path: Path) -> None:
    """The size bound on a 30-day 1024-GPU run (synthetic events, the real renderer)."""
    from tests.legible.synthetic import big_run_dir

    rd = read_run(big_run_dir(tmp_path, gpus=1024, days=30))
    html = render_report(rd)
    assert len(html.encode()) < 10_000_000
    timeline = _svgs(html)[0]
    assert "Each row is one group of 4 nodes" in html  # 128 nodes in 32 rows
    groups = [g for g in timeline.iter(f"{{{SVG_NS}}}g") if (g.get("class") or "")[:1] in ("t", "h")]
    assert sum(_path_bars(g) + len(list(g.iter(f"{{{SVG_NS}}}rect"))) for g in groups) > 50_000


def test_same_run_same_report_byte_for_byte(run_dir: Path) -> None:
    rd = read_run(run_dir)
    assert render_report(rd) == render_report(read_run(run_dir))


def test_the_report_streams_the_event_log_and_draws_what_the_whole_read_draws(
    run_dir: Path, base_dir: Path, tmp_path: Path
) -> None:
    """``allot report`` folds each log into its intervals instead of holding its records
    (issue 27 item 5, <= 300 MB on a 30-day run), and the file is the same bytes."""
    from allotment.legible.report import read_for_report

    new, ivs = read_for_report(run_dir)
    base, base_ivs = read_for_report(base_dir)
    assert new.events == () and base.events == ()  # nothing of the log kept
    whole, whole_base = read_run(run_dir), read_run(base_dir)
    assert new.end == whole.end and ivs == intervals(whole.events, whole.end)
    assert base.end == whole_base.end and base_ivs == intervals(whole_base.events, whole_base.end)
    out = tmp_path / "r.html"
    assert main(["report", "--run", str(run_dir), "--baseline", str(base_dir), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render_report(whole, whole_base)


def test_a_bad_event_line_in_a_streamed_report_is_file_line_col(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    lines = (bad / "events.jsonl").read_text().splitlines(keepends=True)
    (bad / "events.jsonl").write_text("".join(lines[:3]) + '{"t": 1, "event": "teleport"}\n' + "".join(lines[3:]))
    assert main(["report", "--run", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"{bad / 'events.jsonl'}:4:1: 'event' must be one of" in err and "Traceback" not in err
