"""allot simulate end to end on a tiny hand-made trace and repo-less config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main


def _write_trace(path: Path) -> None:
    lines = [
        {"id": "a1", "submit": 0, "account": "x", "gpus": 2, "work": 600},
        {"id": "a2", "submit": 5, "account": "x", "gpus": 1, "work": 60, "kind": "debug", "min_runtime": 60},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_bad_set_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--repo", str(tmp_path), "--trace", str(tmp_path / "t.jsonl"), "--set", "lookback"])
    assert code == 2
    err = capsys.readouterr().err
    assert "KEY=VALUE" in err and "Traceback" not in err


def test_missing_trace_is_a_usage_error(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--repo", str(repo_root), "--at", "2026-11-29", "--trace", "/nonexistent.jsonl"])
    assert code == 2
    assert "no such file" in capsys.readouterr().err


def test_simulate_writes_metrics_json(repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    code = main(
        ["simulate", "--repo", str(repo_root), "--at", "2026-11-29", "--scenario", "ai2", "--days", "0.25", "--json", str(out)]
    )
    assert code == 0
    m = json.loads(out.read_text())
    for key in ("occupancy", "allocated_fraction", "unallocated_fraction", "demand_ratio", "owed_gpu_hours",
                "delivered_gpu_hours", "delivered_over_owed", "teams", "wait", "preemptions", "lost_gpu_hours",
                "drain_seconds", "human_drains", "jobs", "received", "pending"):
        assert key in m
    assert "sim_seconds" not in m  # wall time is printed, never a metric
    assert set(m["wait"]) == {"all", "large", "debug", "interactive", "train", "batch", "inference"}
    assert "sim_seconds" not in m  # wall time is printed, never a metric (it differs between runs)
    assert "occupancy" in capsys.readouterr().out

