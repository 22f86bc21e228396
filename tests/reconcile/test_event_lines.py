"""Reading an event log back (``allot replay --from-events``): a bad file is every problem at
once as ``file:line:col``, never a traceback and never an event counted in the wrong window."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.reconcile.replay.events import Event, read_events
from allotment.traces.diagnostics import TraceDiagnostics


def _log(tmp_path: Path, *lines: str) -> Path:
    p = tmp_path / "events.jsonl"
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


def test_a_good_log_reads_in_time_order_and_ignores_keys_it_does_not_know(tmp_path: Path) -> None:
    p = _log(
        tmp_path,
        '{"t": 10, "event": "start", "job": "a", "gpus": 8, "nodes": 1, "allocated": true}',
        '{"t": 0, "event": "submit", "job": "a", "kind": "debug"}',
        "",
        '{"t": 5, "event": "reserve", "job": "b", "at": 900}',
    )
    assert read_events(p) == [
        Event(0.0, "submit", "a", kind="debug"),
        Event(5.0, "reserve", "b"),
        Event(10.0, "start", "a", gpus=8, nodes=1, allocated=True),
    ]


def test_every_bad_line_is_reported_at_once_at_its_column(tmp_path: Path) -> None:
    p = _log(
        tmp_path,
        '{"t": 0, "event": "submit", "job": "a"}',
        '{"t": -5, "event": "start", "job": "a"}',
        '{"t": 1, "event": "launch", "job": "a"}',
        "not json",
        '{"t": 2, "event": "end", "gpus": "8", "allocated": "yes"}',
        '{"event": "end", "job": "a"}',
        "[1, 2]",
        '{"t": 3, "event": "end", "event": "end"}',
        '{"t": 4, "event": "preempt", "lost_gpu_hours": -1, "nodes": -2}',
        '{"t": NaN, "event": "end"}',
    )
    with pytest.raises(TraceDiagnostics) as exc:
        read_events(p)
    got = [d.format().removeprefix(f"{p}:") for d in exc.value.diagnostics]
    assert got == [
        "2:2: t must be 0 or more, got -5",
        "3:10: event must be one of submit, start, preempt, end, reject, reserve, release, drain, "
        "resume, got the string 'launch'",
        "4:1: not valid JSON: Expecting value",
        "5:26: gpus must be an integer, got the string '8'",
        "5:39: allocated must be true or false, got the string 'yes'",
        "6:1: missing 't' (the event's time)",
        "7:1: each line must be a JSON object",
        "8:26: key 'event' appears twice",
        "9:30: lost_gpu_hours must be a finite number of 0 or more, got the number -1",
        "9:52: nodes must be 0 or more, got -2",
        "10:1: not valid JSON: NaN is not a number allowed in a trace",
    ]
