"""Rendered outputs (import summary, canonical lines, --repo-out files) against reviewed golden
files; ``make regen`` rewrites them for review as a diff."""

from __future__ import annotations

from pathlib import Path

from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import SacctImporter
from allotment.traces.pipeline import import_trace
from allotment.traces.repo_out import RepoOutOptions, render_repo
from allotment.traces.summary import render_summary
from tests.conftest import assert_golden

from .conftest import SACCT

GOLDEN = Path(__file__).parent / "golden"


def test_sacct_sample_renders_as_reviewed(tmp_path: Path, regen_golden: bool) -> None:
    out = tmp_path / "sacct.jsonl"
    result = import_trace(
        SacctImporter(), SACCT, out, fill=FillRules(), display_name="sacct_sample.txt"
    )
    summary = render_summary(result).replace(str(out), "sacct.jsonl")
    assert_golden(GOLDEN / "sacct_summary.txt", summary, regen_golden)
    assert_golden(GOLDEN / "sacct.jsonl", out.read_text(), regen_golden)
    files = render_repo(result, RepoOutOptions(gpus=32))
    text = "".join(f"--- {path}\n{body}" for path, body in files.items())
    assert_golden(GOLDEN / "sacct_repo_out.txt", text, regen_golden)
