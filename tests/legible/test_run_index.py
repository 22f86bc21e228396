"""The moment index of a saved run (``legible/run_index.py``): ``allot explain`` starts from its
nearest checkpoint instead of folding the whole event log, and says exactly what the whole
read says; an index that does not match its run is one line, then the whole run is read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import allotment.legible.replay
import allotment.legible.run_index as run_index
from allotment.cli.main import main
from allotment.legible.replay import moment
from allotment.legible.rundir import read_run
from tests.conftest import REPO_ROOT

HOUR = 3600.0


def _explain(capsys: pytest.CaptureFixture[str], run: Path, *argv: str) -> tuple[str, str]:
    assert main(["explain", *argv, "--run", str(run), "--repo", str(REPO_ROOT)]) == 0
    got = capsys.readouterr()
    return got.out, got.err


@pytest.fixture()
def hourly(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The saved run with a checkpoint every hour, so instants fall between many of them."""
    out = tmp_path / "hourly"
    shutil.copytree(run_dir, out)
    monkeypatch.setattr(run_index, "EVERY_S", HOUR)
    assert run_index.write_index(out)
    return out


def _instants(run_dir: Path) -> list[float]:
    rd = read_run(run_dir)
    ts = [-1.0, 0.0, HOUR, 24 * HOUR, rd.end, rd.end + 1.0]
    ts += [e.t for e in rd.events[:: max(1, len(rd.events) // 25)]]  # on events, ties included
    return ts + [t + 0.5 for t in ts]


def test_the_index_gives_the_moment_the_whole_log_gives(hourly: Path) -> None:
    rd = read_run(hourly)
    index = run_index.open_index(hourly)
    assert index is not None and len(index.checkpoints) > 24
    for t in _instants(hourly):
        assert index.moment(t) == moment(rd, t), t


def test_explain_folds_from_the_nearest_checkpoint_not_from_the_start(
    hourly: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rd = read_run(hourly)
    job = next(e.job for e in rd.events if e.event == "preempt")
    t = rd.end * 0.9
    folded: list[str] = []
    real_apply = allotment.legible.replay.Replay.apply

    def counting(self: allotment.legible.replay.Replay, e: run_index.Event) -> None:
        folded.append(e.job)
        real_apply(self, e)

    monkeypatch.setattr(allotment.legible.replay.Replay, "apply", counting)
    _explain(capsys, hourly, job, "--at", str(t))
    before = sum(1 for e in rd.events if e.t <= t)
    after_checkpoint = sum(1 for e in rd.events if t - HOUR < e.t <= t)
    assert 0 < len(folded) <= after_checkpoint < before / 10


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_explain_says_the_same_with_and_without_the_index(
    hourly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(hourly, bare)
    (bare / run_index.FILE).unlink()
    rd = read_run(hourly)
    jobs = sorted({e.job for e in rd.events if e.event in ("preempt", "reserve", "reject", "end")})[::97]
    jobs += [next(e.job for e in rd.events if e.event == "submit")]
    for job in jobs:
        for at in ((), ("--at", "6h"), ("--at", "25h30m"), ("--at", str(rd.end))):
            with_index = _explain(capsys, hourly, job, *at, "--format", fmt)
            whole = _explain(capsys, bare, job, *at, "--format", fmt)
            assert with_index == whole, (job, at)


def test_the_index_is_the_same_bytes_for_the_same_run(run_dir: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(run_dir, again)
    assert run_index.write_index(again)
    assert (again / run_index.FILE).read_bytes() == (run_dir / run_index.FILE).read_bytes()


@pytest.mark.parametrize("spoil", ["events", "version", "garbage", "checkpoint"])
def test_an_index_that_does_not_match_is_one_line_and_the_whole_run_is_read(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: str
) -> None:
    good = _explain(capsys, run_dir, next(e.job for e in read_run(run_dir).events if e.event == "preempt"), "--at", "30h")
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    idx = bad / run_index.FILE
    head, _, body = idx.read_text().partition("\n")
    if spoil == "events":
        with (bad / "events.jsonl").open("a") as f:
            f.write("\n")  # the same events, another file: the sha256 no longer matches
    elif spoil == "version":
        idx.write_text(head.replace('"format_version":1', '"format_version":99') + "\n" + body)
    elif spoil == "garbage":
        idx.write_text("{not json\n" + body)
    else:
        idx.write_text(head + "\n" + "[]\n" * body.count("\n"))
    job = next(e.job for e in read_run(run_dir).events if e.event == "preempt")
    out, err = _explain(capsys, bad, job, "--at", "30h")
    assert out == good[0]
    assert len(err.splitlines()) == 1 and err.startswith("note: ") and "reading the whole run" in err
    assert "Traceback" not in err


def test_a_log_the_index_cannot_stand_for_gets_no_index(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    (bad / run_index.FILE).unlink()
    lines = (bad / "events.jsonl").read_text().splitlines(keepends=True)
    (bad / "events.jsonl").write_text("".join(lines[:5]) + '{"t": "x", "event": "submit"}\n' + "".join(lines[5:]))
    assert not run_index.write_index(bad)
    assert not (bad / run_index.FILE).exists()
