"""Issue 32, item 11: ``allot explain`` works on every saved run, and a bad ``meta.json`` is one
line (exit 2), never a traceback.

A run saved from ``allot simulate --trace FILE --save DIR`` without ``--days`` records
``"days": null`` (it ran until every job was done); ``explain JOB --run DIR`` without ``--at``
was a ``TypeError`` traceback on it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from allotment.cli.main import main
from allotment.legible.rundir import read_run
from tests.conftest import REPO_ROOT


def _with_meta(run_dir: Path, tmp_path: Path, **fields: Any) -> Path:
    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    meta = json.loads((out / "meta.json").read_text())
    (out / "meta.json").write_text(json.dumps({**meta, **fields}))
    return out


def test_explain_a_trace_run_saved_without_days_needs_no_at(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _with_meta(run_dir, tmp_path, days=None)  # as simulate --trace without --days writes
    job = read_run(run).events[-1].job or next(iter(read_run(run).jobs))
    assert main(["explain", job, "--run", str(run), "--repo", str(REPO_ROOT)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err and job in out.out


@pytest.mark.parametrize(
    ("field", "value"),
    [("days", "x"), ("days", float("nan")), ("days", -1), ("capacity_gpus", 1.5), ("t0", "soon")],
)
def test_a_bad_meta_field_is_one_line_and_exit_2(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any
) -> None:
    run = _with_meta(run_dir, tmp_path, **{field: value})
    job = next(iter(read_run(run_dir).jobs))
    assert main(["explain", job, "--run", str(run), "--repo", str(REPO_ROOT)]) == 2
    err = capsys.readouterr().err
    assert f"meta.json:1:1: '{field}'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
