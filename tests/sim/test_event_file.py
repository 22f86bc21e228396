"""Memory that follows the question (issue 27): a run keeps no event unless asked, and a log
asked for is written to its file as the run goes, byte for byte the log kept in memory."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from allotment.sim import event_file
from allotment.sim.event_file import EventFile, read_events
from allotment.sim.events import Event, encode_log
from allotment.sim.runner import simulate
from allotment.traces.scenarios.ai2 import generate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

CONFIG = make_config({"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}, nodes=16)


@pytest.fixture(scope="module")
def workload() -> Workload:
    return generate(CONFIG, cluster="c1", days=1.0, seed=3)


def _events_alive() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Event)


def test_a_run_holds_no_event_unless_asked(workload: Workload) -> None:
    before = _events_alive()
    result = simulate(CONFIG, workload, days=1.0)
    assert result.metrics["jobs"]["submitted"] > 200  # as many submit events, and more
    assert result.events is None
    assert _events_alive() == before


def test_kept_events_are_every_event_in_order(workload: Workload) -> None:
    seen: list[Event] = []
    result = simulate(CONFIG, workload, days=1.0, keep_events=True, on_event=seen.append)
    assert result.events is not None and list(result.events) == seen and len(seen) > 1000


def test_the_streamed_file_is_the_whole_log_byte_for_byte(workload: Workload, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with EventFile(path) as out:
        result = simulate(CONFIG, workload, days=1.0, keep_events=True, on_event=out)
        assert result.header is not None and result.events is not None
        out.finish(result.header)
    assert path.read_text(encoding="utf-8") == "".join(encode_log(result.header, result.events))
    assert list(read_events(path)) == list(result.events)
    assert [p.name for p in tmp_path.iterdir()] == ["events.jsonl"]  # the spool is gone


def test_the_log_reaches_the_disk_while_the_run_goes(
    workload: Workload, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines go to the spool beside the target in batches, not held until the end."""
    monkeypatch.setattr(event_file, "BATCH_LINES", 100)
    path = tmp_path / "events.jsonl"
    on_disk: list[int] = []
    with EventFile(path) as out:

        def write(e: Event) -> None:
            out(e)
            on_disk.append(sum(p.stat().st_size for p in tmp_path.iterdir()))

        result = simulate(CONFIG, workload, days=1.0, on_event=write)
        assert result.header is not None
        out.finish(result.header)
    assert len(on_disk) > 1000 and on_disk[98] == 0 and on_disk[99] > 0  # the 100th line flushes
    assert on_disk[-1] > on_disk[500] > on_disk[100]


def test_a_run_that_fails_leaves_no_file(workload: Workload, tmp_path: Path) -> None:
    def fail_late(e: Event) -> None:
        out(e)
        if e.t > 3600.0:
            raise OSError("disk full")

    with pytest.raises(OSError), EventFile(tmp_path / "events.jsonl") as out:
        simulate(CONFIG, workload, days=1.0, on_event=fail_late)
    assert list(tmp_path.iterdir()) == []


def test_a_log_named_gz_is_compressed_as_every_line_output_is(workload: Workload, tmp_path: Path) -> None:
    """``--events FILE.gz`` was compressed by the writer every line output goes through; the
    streamed log is byte for byte what that writer makes of the same lines."""
    from allotment.traces.writer import AtomicWriter

    path = tmp_path / "events.jsonl.gz"
    with EventFile(path) as out:
        result = simulate(CONFIG, workload, days=0.25, keep_events=True, on_event=out)
        assert result.header is not None and result.events is not None
        out.finish(result.header)
    with AtomicWriter(tmp_path / "whole.jsonl.gz") as whole:
        for line in encode_log(result.header, result.events):
            whole.write_line(line.rstrip("\n"))
    assert path.read_bytes() == (tmp_path / "whole.jsonl.gz").read_bytes()
    assert path.read_bytes()[:2] == b"\x1f\x8b"
