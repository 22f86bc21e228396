"""Issue 32, item 11: a trace job that no node still healthy from its submission on can run is
refused before simulating (``simulate --trace`` of it never ended: killed after 15 minutes)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.errors import TraceError
from allotment.sim.workloads import from_trace
from tests.conftest import REPO_ROOT

B200 = [f"b200-n{i:02d}" for i in range(1, 12)]  # the bundled b200 cluster: 11 nodes of 8


def _trace(path: Path, gone: list[str], jobs: list[dict[str, object]]) -> Path:
    lines = [{"type": "node", "time": 0, "node": n, "state": "unhealthy"} for n in gone]
    lines += [{"type": "node", "time": 5, "node": "b200-n01", "state": "healthy"}]  # back: fine
    path.write_text("".join(json.dumps(x) + "\n" for x in [*lines, *jobs]))
    return path


def _job(i: str, submit: float, gpus: int) -> dict[str, object]:
    return {"id": i, "submit": submit, "account": "red-team", "gpus": gpus, "work": 600}


def test_a_job_no_node_still_healthy_can_run_is_refused_before_simulating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path / "t.jsonl", B200[:9], [_job("fits", 10, 16), _job("too-big", 20, 32)])
    config = compile_repo(REPO_ROOT, dt.date(2026, 11, 30))
    with pytest.raises(TraceError) as info:
        from_trace(path, config, "b200")
    assert str(info.value) == (
        f"{path}: job 'too-big' (submitted at 20 s) can never run: from then on only 3 of the 11 "
        "nodes of b200 (24 GPUs) are ever healthy again, and it does not fit them"
    )
    code = main(["simulate", "--trace", str(path), "--cluster", "b200", "--repo", str(REPO_ROOT)])
    assert code == 2 and "'too-big'" in capsys.readouterr().err


def test_nodes_that_come_back_or_a_job_that_fits_what_is_left_are_fine(tmp_path: Path) -> None:
    path = _trace(tmp_path / "t.jsonl", B200[:9], [_job("fits", 10, 24)])
    config = compile_repo(REPO_ROOT, dt.date(2026, 11, 30))
    assert len(from_trace(path, config, "b200").jobs) == 1
