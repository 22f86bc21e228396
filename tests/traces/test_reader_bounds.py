"""Values no simulator can replay are refused by the reader at their line and key's column.

Each case once passed ``allot trace check`` and then ended ``allot simulate`` in an
OverflowError, a MemoryError, a zlib.error or a job held forever (issues 10.11 and 14.12).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from allotment.traces.bounds import MAX_DURATION_S, MAX_GPUS, MAX_TIME_S
from allotment.traces.canonical import read_trace
from allotment.traces.diagnostics import TraceDiagnostics


def _job(i: str, submit: float = 0, **extra: object) -> dict[str, object]:
    return {"id": i, "submit": submit, "account": "t", "gpus": 8, "work": 60, **extra}


def _errors(tmp_path: Path, lines: list[dict[str, object]] | bytes) -> list[str]:
    path = tmp_path / "t.jsonl"
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(TraceDiagnostics) as info:
        read_trace(path, display_name="t.jsonl")
    return [d.format() for d in info.value.diagnostics]


@pytest.mark.parametrize(
    ("job", "key", "what"),
    [
        (_job("a", work=1e308), "work", "work 1e+308 s is beyond the trace bound of 31,622,400 s"),
        (_job("a", work=3.6e11), "work", "work 3.6e+11 s is beyond the trace bound"),
        (_job("a", work=1e18), "work", "work 1e+18 s is beyond the trace bound"),
        (_job("a", submit=1e300), "submit", "submit 1e+300 s is beyond the trace bound"),
        (_job("a", gpus=10**30), "gpus", "gpus 1e+30 is beyond the trace bound of 1,048,576"),
        (_job("a", min_runtime=-5), "min_runtime", "min_runtime must be 0 or more, got -5"),
        (_job("a", checkpoint_interval=1e20), "checkpoint_interval", "checkpoint_interval 1e+20"),
        (_job("a", deadline=1e12), "deadline", "deadline 1e+12 s is beyond the trace bound"),
        (_job("a", priority=2**40), "priority", "priority 1.1e+12 is outside the 32-bit"),
        (_job("a", gpus_per_node=2**21), "gpus_per_node", "gpus_per_node 2.1e+06 is beyond"),
    ],
)
def test_a_value_beyond_the_bounds_is_a_positioned_error(
    tmp_path: Path, job: dict[str, object], key: str, what: str
) -> None:
    col = json.dumps(job).index(f'"{key}"') + 1
    assert f"t.jsonl:1:{col}: {what}" in "\n".join(_errors(tmp_path, [job]))


def test_the_bounds_themselves_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    job = _job("a", submit=MAX_TIME_S, work=MAX_DURATION_S, gpus=MAX_GPUS, deadline=MAX_TIME_S)
    path.write_text(json.dumps(job) + "\n")
    (back,) = read_trace(path).jobs
    assert (back.submit, back.work, back.gpus) == (MAX_TIME_S, MAX_DURATION_S, MAX_GPUS)


def test_every_bad_line_is_reported_at_once(tmp_path: Path) -> None:
    errors = _errors(tmp_path, [_job("a", work=1e308), _job("b", 1, gpus=10**30), _job("c", 2)])
    assert [e.split(":")[1] for e in errors] == ["1", "2"]


def test_a_dependency_cycle_names_its_jobs_and_a_line(tmp_path: Path) -> None:
    jobs = [
        _job("a"),
        _job("b", 1, depends_on=["c"]),
        _job("c", 2, depends_on=["d"]),
        _job("d", 3, depends_on=["b", "a"]),
        _job("e", 4, depends_on=["e2"]),
        _job("e2", 5, depends_on=["e"]),
    ]
    col = json.dumps(jobs[1]).index('"depends_on"') + 1
    errors = _errors(tmp_path, jobs)
    assert errors == [
        f"t.jsonl:2:{col}: dependency cycle 'b' -> 'c' -> 'd' -> 'b': "
        "these jobs would wait for each other forever",
        f"t.jsonl:5:{col}: dependency cycle 'e' -> 'e2' -> 'e': "
        "these jobs would wait for each other forever",
    ]


def test_a_dependency_chain_is_no_cycle(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    jobs = [_job("a"), _job("b", 1, depends_on=["a"]), _job("c", 2, depends_on=["a", "b"])]
    path.write_text("".join(json.dumps(x) + "\n" for x in jobs))
    assert [j.depends_on for j in read_trace(path).jobs] == [(), ("a",), ("a", "b")]


def test_a_byte_that_is_not_utf8_names_its_line_and_column(tmp_path: Path) -> None:
    good = json.dumps(_job("a")).encode()
    bad = b'{"id":"b","submit":1,"account":"t\xff","gpus":8,"work":60}'
    col = bad.index(b"\xff") + 1
    assert _errors(tmp_path, good + b"\n" + bad + b"\n") == [
        f"t.jsonl:2:{col}: byte 0xff is not UTF-8"
    ]


def test_a_cut_gzip_trace_is_a_positioned_error(tmp_path: Path) -> None:
    body = "".join(json.dumps(_job(f"j{i}", i)) + "\n" for i in range(2000)).encode()
    errors = _errors(tmp_path, gzip.compress(body)[:-200])
    assert len(errors) == 1 and "cannot read this line" in errors[0], errors
    assert errors[0].startswith("t.jsonl:") and ":1: " in errors[0]


def test_deeply_nested_json_is_a_positioned_error_not_a_recursion_error(tmp_path: Path) -> None:
    deep = b'{"id":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    good = json.dumps(_job("a")).encode() + b"\n"
    assert _errors(tmp_path, good + deep) == ["t.jsonl:2:1: not valid JSON here: nested too deeply"]
