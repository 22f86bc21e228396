"""Reading a run dir: every bad line reported at once as file:line:col, exit 2, no traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.errors import UsageError
from allotment.legible.rundir import read_run


def test_run_dir_reads_back_what_the_simulator_recorded(run_dir: Path) -> None:
    rd = read_run(run_dir)
    assert rd.cluster == "b200" and rd.capacity_gpus == 88
    starts = [e for e in rd.events if e.event == "start"]
    assert starts and all(e.job in rd.jobs for e in starts)
    assert rd.fairshare[0].t == 0 and rd.fairshare[-1].t == pytest.approx(rd.end)
    assert [e.t for e in rd.events] == sorted(e.t for e in rd.events)


def test_reading_a_run_holds_its_records_not_the_whole_log_besides(run_dir: Path) -> None:
    """Lines become records one at a time (issue 27): the peak while reading is about what
    ``read_run`` returns, not that plus the file's text, its lines and a dict per line (2.3x
    on a 3-day run before)."""
    import tracemalloc

    read_run(run_dir)  # the modules it imports are not the reading's
    tracemalloc.start()
    try:
        rd = read_run(run_dir)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rd.events) > 1000
    assert peak < 1.5 * kept


def test_every_bad_line_is_reported_with_its_position(run_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    lines = (bad / "events.jsonl").read_text().splitlines()
    lines[2] = '{"t": "soon", "event": "start"}'
    lines[4] = '{"t": 3, "event": "explode"}'
    lines[6] = "{not json"
    (bad / "events.jsonl").write_text("\n".join(lines) + "\n")
    (bad / "metrics.json").unlink()
    with pytest.raises(UsageError) as err:
        read_run(bad)
    msg = str(err.value)
    assert f"{bad / 'events.jsonl'}:3:1: 't' must be a number" in msg
    assert f"{bad / 'events.jsonl'}:5:1: 'event' must be one of" in msg
    assert f"{bad / 'events.jsonl'}:7:2:" in msg
    assert f"{bad / 'metrics.json'}: missing" in msg
    assert main(["status", "--run", str(bad)]) == 2
    assert "Traceback" not in capsys.readouterr().err
