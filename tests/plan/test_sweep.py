"""``allot sweep``: a grid of knob values over seeds, each row the very run ``allot simulate``
gives for its knob values and seed, bad input reported all at once before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main

DAYS = ["--scenario", "ai2", "--days", "0.25"]


def _sweep(tmp_path: Path, name: str, *extra: str) -> tuple[str, str]:
    out = tmp_path / f"{name}.json"
    code = main(["sweep", *DAYS, "--json", str(out), *extra])
    assert code == 0
    return out.read_text(), name


def test_a_sweep_row_is_the_single_run_of_its_knob_values_and_seed(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = _sweep(tmp_path, "grid", "--repo", str(repo_root), "--seeds", "1,2",
                     "--set", "lookback=2d,4d", "--workers", "1")
    table = capsys.readouterr().out.splitlines()
    doc = json.loads(text)
    assert [(r["set"], r["seed"]) for r in doc["runs"]] == [
        ({"lookback": "2d"}, 1), ({"lookback": "2d"}, 2), ({"lookback": "4d"}, 1), ({"lookback": "4d"}, 2)
    ]
    assert len({r["key"] for r in doc["runs"]}) == 4  # every run its own content-addressed name
    assert table[0].split()[:2] == ["lookback", "seed"] and len(table) == 5
    single = tmp_path / "single.json"
    assert main(["simulate", "--repo", str(repo_root), *DAYS, "--seed", "2", "--set", "lookback=4d",
                 "--json", str(single)]) == 0
    assert doc["runs"][3]["metrics"] == json.loads(single.read_text())


def test_the_local_pool_gives_the_bytes_of_one_process(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--repo", str(repo_root), "--seeds", "1-3", "--set", "queue_depth=2")
    one, _ = _sweep(tmp_path, "one", *args, "--workers", "1")
    first = capsys.readouterr().out
    pool, _ = _sweep(tmp_path, "pool", *args, "--workers", "2")
    assert pool == one and capsys.readouterr().out == first


def test_bad_knobs_and_values_are_all_reported_at_once_before_any_work(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sweep", "--repo", str(repo_root), *DAYS, "--set", "lookbak=3d",
                 "--set", "queue_depth=0,x", "--set", "lookback=3d,3d", "--set", "foo",
                 "--set", "queue-depth=2", "--json", str(tmp_path / "never.json")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("allot sweep: --set lookbak=3d: unknown knob; known: lookback,")
    assert lines[1:] == [
        "--set queue_depth=0: expected a whole number 1 or more, got '0'",
        "--set queue_depth=x: expected a whole number 1 or more, got 'x'",
        "--set lookback=3d,3d: a value is listed twice",
        "--set foo: expected KNOB=VALUE[,VALUE...], e.g. lookback=3d,7d",
        "--set queue-depth=2: queue-depth is set twice; list its values once, comma-separated",
    ]
    assert not (tmp_path / "never.json").exists()


def test_sweep_help_names_the_executors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--executor {local,slurm}" in text and "--executor-dir DIR" in text
    assert "--set KNOB=V1[,V2...]" in text


def test_a_trace_is_one_workload_swept_like_a_scenario(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.jsonl"
    assert main(["trace", "generate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.25",
                 "--seed", "4", "-o", str(trace), "--at", "2026-11-30"]) == 0
    out = tmp_path / "grid.json"
    assert main(["sweep", "--repo", str(repo_root), "--trace", str(trace), "--seeds", "1-3",
                 "--set", "queue_depth=1,4", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [(r["set"], r["seed"]) for r in doc["runs"]] == [({"queue_depth": "1"}, 1), ({"queue_depth": "4"}, 1)]
    single = tmp_path / "single.json"
    assert main(["simulate", "--repo", str(repo_root), "--trace", str(trace), "--seed", "1",
                 "--set", "queue_depth=1", "--json", str(single)]) == 0
    assert doc["runs"][0]["metrics"] == json.loads(single.read_text())
    assert capsys.readouterr().err.count("Traceback") == 0
