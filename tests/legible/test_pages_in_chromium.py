"""The report, the plan report and the live page opened in real headless Chromium: they render (screenshots that
are not blank, saved for a person to look at) and Chromium's DOM has every section and picture.

Set ALLOT_SCREENSHOTS=DIR to keep the PNGs (docs/img/ holds the ones docs/legibility.md shows)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from allotment.cli.main import main
from allotment.legible.serve import make_server
from tests.legible.chromium import dump_dom, png_facts, screenshot
from tests.plan.gitrepo import GitRepo
from tests.plan.test_plan_cli import vision_pr


def _keep(png: Path) -> None:
    where = os.environ.get("ALLOT_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(where) / png.name)


def test_report_renders_in_chromium(run_dir: Path, base_dir: Path, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    assert main(["report", "--run", str(run_dir), "--baseline", str(base_dir), "-o", str(html)]) == 0
    url = html.as_uri()
    dom = dump_dom(url, tmp_path / "profile")
    for section in ("summary", "timeline", "teams", "waits", "tree"):
        assert f'id="{section}"' in dom
    assert dom.count("<svg") == html.read_text().count("<svg")
    png = screenshot(url, tmp_path / "report.png", (1400, 1600), tmp_path / "profile")
    width, height, shades = png_facts(png)
    assert (width, height) == (1400, 1600) and shades > 50
    _keep(png)


def test_plan_report_renders_in_chromium(tmp_path: Path) -> None:
    repo = GitRepo.from_data(tmp_path / "repo")
    repo.commit("Initial budget tree", author="pat@acme.example")
    vision_pr(repo)
    html = tmp_path / "plan.html"
    assert main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr", "--no-simulate",
                 "--out", str(tmp_path / "plan.md"), "--report", str(html)]) == 0
    url = html.as_uri()
    dom = dump_dom(url, tmp_path / "profile")
    for section in ("summary", "tree", "entitlement", "impact", "approvals"):
        assert f'id="{section}"' in dom
    assert dom.count("<svg") == html.read_text().count("<svg") == 2  # before and after
    assert dom.count('class="moved"') == 4  # vision and nlp, outlined before and after
    png = screenshot(url, tmp_path / "plan.png", (1200, 900), tmp_path / "profile")
    width, height, shades = png_facts(png)
    assert (width, height) == (1200, 900) and shades > 20
    _keep(png)


def test_live_page_renders_in_chromium(state_dir: Path, tmp_path: Path) -> None:
    srv = make_server(state_dir, "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/"
        dom = dump_dom(url, tmp_path / "profile")
        for section in ("tree", "queue", "nodes", "actions"):
            assert f'id="{section}"' in dom
        png = screenshot(url, tmp_path / "live.png", (1200, 900), tmp_path / "profile")
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
    width, height, shades = png_facts(png)
    assert (width, height) == (1200, 900) and shades > 20
    _keep(png)
