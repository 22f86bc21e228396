"""allot simulate / allot explain end to end on a tiny hand-made trace and repo-less config."""

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
                "drain_seconds", "human_drains", "jobs"):
        assert key in m
    assert "sim_seconds" not in m  # wall time is printed, never a metric
    assert set(m["wait"]) == {"debug", "large", "all"}
    assert "occupancy" in capsys.readouterr().out


def test_explain_names_the_metrics_behind_a_decision(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import datetime as dt

    from allotment.compile.compiler import compile_repo
    from allotment.traces.scenarios.ai2 import generate

    config = compile_repo(repo_root, dt.date(2026, 11, 29))
    w = generate(config, cluster=config.largest_cluster(), days=1, seed=0)
    job = next(j.id for j in w.jobs if j.kind == "train")
    code = main(["explain", job, "--repo", str(repo_root), "--at", "2026-11-29", "--scenario", "ai2",
                 "--days", "1", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["job"] == job
    assert report["fair_tree"] and report["state"] in {"pending", "started", "running", "finished"}


def test_no_skip_runs_the_reference_walk_with_byte_identical_output(repo_root: Path, tmp_path: Path) -> None:
    base = ["simulate", "--repo", str(repo_root), "--at", "2026-11-29", "--scenario", "ai2", "--days", "0.1"]
    assert main([*base, "--json", str(tmp_path / "fast.json")]) == 0
    assert main([*base, "--no-skip", "--json", str(tmp_path / "ref.json")]) == 0
    assert (tmp_path / "fast.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
