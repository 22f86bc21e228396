"""``allot simulate --save DIR``: a run directory holds the run, written all at once or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.legible import run_index
from allotment.sim import rundir
from allotment.sim.events import metrics_from_events, read_log
from allotment.traces.canonical import read_trace
from allotment.traces.scenarios import get_scenario

ARGS = ["--scenario", "ai2", "--days", "0.25", "--seed", "1"]


@pytest.fixture(scope="module")
def saved(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("run")
    run, js = d / "run", d / "m.json"
    assert main(["simulate", "--repo", str(repo_root), *ARGS, "--save", str(run), "--json", str(js)]) == 0
    return run, js


@pytest.fixture(scope="module")
def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def test_a_run_directory_holds_every_file_and_its_meta(saved: tuple[Path, Path]) -> None:
    run, _ = saved
    # and the moment index allot explain starts from (legible/run_index.py), matching the run
    assert sorted(p.name for p in run.iterdir()) == sorted([*rundir.FILES, run_index.FILE])
    assert run_index.open_index(run) is not None
    meta = json.loads((run / "meta.json").read_text())
    assert meta == {
        "format_version": 1,
        "allot_version": meta["allot_version"],
        "config_sha256": meta["config_sha256"],
        "policy": "budgets",
        "cluster": "h100",
        "seed": 1,
        "days": 0.25,
        "scenario": "ai2",
        "t0": "2026-11-30T00:00:00+00:00",
        "capacity_gpus": 1024,
        "no_skip": False,
    }
    assert len(meta["config_sha256"]) == 64
    assert not run.with_name("run.tmp").exists()


def test_metrics_json_is_the_json_output_and_the_events_reproduce_it(saved: tuple[Path, Path]) -> None:
    run, js = saved
    assert (run / "metrics.json").read_bytes() == js.read_bytes()
    header, events = read_log(run / "events.jsonl")
    assert metrics_from_events(header, events) == json.loads(js.read_text())


def test_compiled_json_is_allot_compile_output(
    saved: tuple[Path, Path], repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, _ = saved
    capsys.readouterr()
    assert main(["compile", "--repo", str(repo_root), "--at", "2026-11-30", "--format", "json"]) == 0
    assert (run / "compiled.json").read_text() == capsys.readouterr().out


def test_the_saved_trace_is_the_simulated_workload(saved: tuple[Path, Path], repo_root: Path) -> None:
    run, _ = saved
    import datetime as dt

    from allotment.compile.compiler import compile_repo

    config = compile_repo(repo_root, dt.date(2026, 11, 30))
    w = get_scenario("ai2")(config, cluster="h100", days=0.25, seed=1)
    t = read_trace(run / "trace.jsonl")
    assert t.jobs == w.jobs and t.node_events == w.node_events
    assert t.header["start"] == "2026-11-30T00:00:00+00:00"


def test_fairshare_samples_at_t0_every_hour_and_the_end(saved: tuple[Path, Path]) -> None:
    """A 6-hour run: samples at 0, 3600, ..., 18000 and 21600 (the end)."""
    run, _ = saved
    lines = [json.loads(x) for x in (run / "fairshare.jsonl").read_text().splitlines()]
    assert [x["t"] for x in lines] == [h * 3600.0 for h in range(7)]
    last = lines[-1]
    assert [x["rank"] for x in last["leaves"]] == list(range(15))
    assert set(last["leaves"][0]) == {"leaf", "tier", "rank", "usage_gpu_hours", "entitlement_gpus", "running_gpus", "pending_gpus"}
    assert sum(x["running_gpus"] for x in last["leaves"]) > 0
    root = next(n for n in last["nodes"] if n["node"] == "ai2")
    assert root["usage_gpu_hours"] == pytest.approx(sum(x["usage_gpu_hours"] for x in last["leaves"]))
    assert lines[0]["leaves"][0]["usage_gpu_hours"] == 0.0


def test_a_failed_save_leaves_neither_a_half_run_nor_a_changed_old_one(
    saved: tuple[Path, Path], repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text("old")

    def boom(*a: object, **k: object) -> object:
        raise OSError("disk full")

    monkeypatch.setattr(rundir, "fairshare_samples", boom)
    # one line naming the failure, exit 2, no traceback (cli/main.py)
    assert main(["simulate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.05", "--save", str(run)]) == 2
    err = capsys.readouterr().err
    assert "allot simulate: disk full" in err and "Traceback" not in err
    assert (run / "meta.json").read_text() == "old" and sorted(p.name for p in run.iterdir()) == ["meta.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_json_dash_prints_only_the_json(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.05", "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["policy"] == "budgets"


def test_the_same_run_saved_twice_is_byte_identical(repo_root: Path, tmp_path: Path) -> None:
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:
        args = ["simulate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.05", "--seed", "3"]
        assert main([*args, "--save", str(run)]) == 0
    for name in rundir.FILES:
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name


def test_events_gz_and_save_together_write_one_log_twice(repo_root: Path, tmp_path: Path) -> None:
    """``--events FILE.gz`` is compressed; the run dir's copy of the same log stays plain."""
    import gzip

    ev, run = tmp_path / "e.jsonl.gz", tmp_path / "run"
    args = ["simulate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.05"]
    assert main([*args, "--events", str(ev), "--save", str(run)]) == 0
    assert gzip.decompress(ev.read_bytes()) == (run / "events.jsonl").read_bytes()
    assert (run / "events.jsonl").read_bytes().startswith(b'{"event":"header"')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.jsonl.gz", "run"]
