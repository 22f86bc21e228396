"""The canonical JSONL trace: round trips, determinism and positioned errors."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.jobs import JOB_KINDS, JobSpec, NodeEvent
from allotment.traces.bounds import MAX_DURATION_S, MAX_GPUS, MAX_TIME_S
from allotment.traces.canonical import (
    encode,
    read_trace,
    sorted_items,
    write_trace,
)
from allotment.traces.diagnostics import TraceDiagnostics


def _upto(bound: float) -> st.SearchStrategy[float]:
    return st.one_of(
        st.integers(min_value=0, max_value=int(bound)).map(float),
        st.floats(min_value=0, max_value=bound, allow_nan=False, allow_infinity=False),
    )


times = _upto(MAX_TIME_S / 2)  # half, so that submit + a deadline offset stays in bounds
durations = _upto(MAX_DURATION_S)
names = st.text(max_size=10).map(lambda s: "x" + s)  # any text, never blank


@st.composite
def job_specs(draw: st.DrawFn) -> JobSpec:
    gpn = draw(st.one_of(st.none(), st.integers(1, 8)))
    gpus = draw(st.integers(1, 64)) * (gpn or 1)
    submit = draw(times)
    return JobSpec(
        id=draw(names),
        submit=submit,
        account=draw(names),
        gpus=gpus,
        work=draw(durations.filter(lambda x: x > 0)),
        user=draw(st.text(max_size=8)),
        gpus_per_node=gpn,
        min_runtime=draw(st.one_of(st.none(), durations)),
        resumable=draw(st.booleans()),
        checkpoint_interval=draw(st.one_of(st.none(), durations.filter(lambda x: x > 0))),
        priority=draw(st.integers(-1000, 1000)),
        kind=draw(st.sampled_from(JOB_KINDS)),
        deadline=draw(st.one_of(st.none(), times.map(lambda d: submit + d))),
        depends_on=(),
        gpu_type=draw(st.one_of(st.none(), names)),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(job_specs(), max_size=20, unique_by=lambda j: j.id), st.data())
def test_write_then_read_round_trips_any_jobspec(
    tmp_path_factory: pytest.TempPathFactory, jobs: list[JobSpec], data: st.DataObject
) -> None:
    ids = [j.id for j in jobs]
    # each job may depend on jobs listed before it (in any file order): no cycles
    jobs = [
        replace(
            j,
            depends_on=tuple(
                data.draw(st.lists(st.sampled_from(ids[:k]), unique=True, max_size=3))
            ),
        )
        if k > 0
        else j
        for k, j in enumerate(jobs)
    ]
    nodes = data.draw(
        st.lists(
            st.builds(NodeEvent, times, names, st.sampled_from(["unhealthy", "healthy"])),
            max_size=5,
        )
    )
    path = tmp_path_factory.getbasetemp() / "round-trip.jsonl"  # rewritten by each example
    items = sorted_items(jobs, nodes)
    write_trace(path, items)
    back = read_trace(path)
    assert sorted_items(back.jobs, back.node_events) == items
    assert [j for j in items if isinstance(j, JobSpec)] == list(back.jobs)


def test_dependencies_and_node_events_round_trip(tmp_path: Path) -> None:
    jobs = [
        JobSpec(id="a", submit=0, account="t", gpus=8, work=60),
        JobSpec(
            id="b", submit=5, account="t", gpus=16, gpus_per_node=8, work=60, depends_on=("a",)
        ),
    ]
    nodes = [NodeEvent(3, "n1", "unhealthy"), NodeEvent(7.5, "n1", "healthy")]
    path = tmp_path / "t.jsonl"
    write_trace(path, sorted_items(jobs, nodes), header={"source": "test", "seed": 3})
    t = read_trace(path)
    assert t.jobs == tuple(jobs) and t.node_events == tuple(nodes)
    assert t.header["source"] == "test" and t.header["version"] == 1


def test_output_is_byte_identical_and_gzip_is_deterministic(tmp_path: Path) -> None:
    jobs = [JobSpec(id=str(i), submit=i * 1.5, account="a", gpus=1, work=10.0) for i in range(50)]
    for name in ("a.jsonl", "b.jsonl", "a.jsonl.gz", "b.jsonl.gz"):
        write_trace(tmp_path / name, sorted_items(jobs, []), header={"seed": 1})
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert (
        gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes())
        == (tmp_path / "a.jsonl").read_bytes()
    )
    assert read_trace(tmp_path / "a.jsonl.gz").jobs == tuple(jobs)


def test_encoding_uses_fixed_key_order_and_integral_numbers() -> None:
    job = JobSpec(id="j", submit=3.0, account="t", gpus=2, work=7.0, min_runtime=0.0, kind="debug")
    assert encode(job) == (
        '{"id":"j","submit":3,"user":"","account":"t","gpus":2,"work":7,"min_runtime":0,'
        '"resumable":true,"priority":0,"kind":"debug"}'
    )


def _errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(TraceDiagnostics) as info:
        read_trace(path, display_name="bad.jsonl")
    return [d.format() for d in info.value.diagnostics]


def test_every_bad_line_is_reported_with_line_and_column(tmp_path: Path) -> None:
    text = "\n".join(
        [
            '{"id":"a","submit":0,"account":"t","gpus":4,"work":10}',
            '{"id":"b","submit":1,"account":"t","gpus":-4,"work":10}',
            '{"id":"c","submit":2,"account":"t","gpus":6,"gpus_per_node":4,"work":10}',
            '{"id":"d","submit":3,"account":"t","gpus":1,"work":10,"colour":"red"}',
            '{"id":"e","submit":4,"account":"t","gpus":"2","work":10}',
            '{"id":"a","submit":5,"account":"t","gpus":1,"work":10}',
            "{not json",
            '{"id":"f","submit":6,"account":"t","gpus":1}',
            '{"type":"node","time":7,"node":"n1","state":"broken"}',
            '{"id":"g","submit":1,"account":"t","gpus":1,"work":1}',
            '{"id":"h","submit":9,"account":"t","gpus":1,"work":1,"depends_on":["zz"]}',
            '{"id":"i","submit":9,"account":"t","gpus":1,"work":1,"kind":"fun"}',
            '{"id":"j","submit":9,"account":"t","account":"u","gpus":1,"work":1}',
        ]
    )
    errs = _errors(tmp_path, text)
    assert errs == [
        "bad.jsonl:2:36: gpus must be at least 1, got -4",
        "bad.jsonl:3:45: gpus_per_node 4 does not divide gpus 6",
        "bad.jsonl:4:55: unknown key 'colour' in a job line",
        "bad.jsonl:5:36: gpus must be an integer, got the string '2'",
        "bad.jsonl:6:1: duplicate id: line 1 uses it already",
        "bad.jsonl:7:2: not valid JSON: Expecting property name enclosed in double quotes",
        "bad.jsonl:8:1: job line is missing required key 'work'",
        "bad.jsonl:9:37: state must be 'unhealthy' or 'healthy', got the string 'broken'",
        "bad.jsonl:10:11: submit 1 is earlier than line 6 (5); lines must be in time order",
        "bad.jsonl:11:54: depends_on names unknown job 'zz'",
        "bad.jsonl:12:54: kind must be one of debug, train, interactive, batch, inference, got the string 'fun'",
        "bad.jsonl:13:36: key 'account' appears twice",
    ]


def test_error_cap_stops_a_hopeless_file(tmp_path: Path) -> None:
    errs = _errors(tmp_path, "nope\n" * 500)
    assert len(errs) == 101
    assert "bad.jsonl:0:0: stopped after 100 errors; fix these first" in errs


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id":"a","submit":NaN,"account":"t","gpus":1,"work":1}', "not valid JSON"),
        ('{"id":"a","submit":0,"account":"t","gpus":1,"work":0}', "work must be greater than 0"),
        ('{"id":"a","submit":0,"account":"","gpus":1,"work":1}', "account must not be empty"),
        (
            '{"id":"a","submit":0,"account":"t","gpus":1,"work":1,"resumable":"yes"}',
            "resumable must be true or false",
        ),
        (
            '{"id":"a","submit":9,"account":"t","gpus":1,"work":1,"deadline":3}',
            "deadline 3 is before submit 9",
        ),
        (
            '{"id":"a","submit":0,"account":"t","gpus":1,"work":1,"depends_on":["a"]}',
            "cannot depend on itself",
        ),
        (
            '{"id":"a","submit":0,"account":"t","gpus":true,"work":1}',
            "gpus must be an integer, got a boolean",
        ),
        ("[1,2]", "each line must be a JSON object"),
        ('{"type":"header","version":2}', "unsupported trace format version 2"),
        (
            '{"type":"node","time":0,"node":"n","state":"healthy","x":1}',
            "unknown key 'x' in a node line",
        ),
    ],
)
def test_invalid_values_are_rejected(tmp_path: Path, line: str, message: str) -> None:
    errs = _errors(tmp_path, line + "\n")
    assert len(errs) == 1 and message in errs[0], errs


def test_header_only_allowed_first(tmp_path: Path) -> None:
    errs = _errors(
        tmp_path,
        '{"id":"a","submit":0,"account":"t","gpus":1,"work":1}\n{"type":"header","version":1}\n',
    )
    assert errs == ["bad.jsonl:2:2: a header line is only allowed as the first line"]


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('\n{"id":"a","submit":0,"account":"t","gpus":1,"work":1}\n\n')
    assert [j.id for j in read_trace(p).jobs] == ["a"]


def test_writer_refuses_out_of_order_items_and_leaves_no_file(tmp_path: Path) -> None:
    jobs = [
        JobSpec(id="a", submit=5, account="t", gpus=1, work=1),
        JobSpec(id="b", submit=1, account="t", gpus=1, work=1),
    ]
    with pytest.raises(ValueError):
        write_trace(tmp_path / "t.jsonl", jobs)
    assert list(tmp_path.iterdir()) == []


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.floats(allow_nan=False),
    st.sampled_from(["", " ", "a", "debug", "train", "2"]),
    st.lists(st.sampled_from(["a", "b"]), max_size=2),
    # the edges of the bounds, which the fast path inlines
    st.sampled_from([MAX_TIME_S, MAX_TIME_S + 1, MAX_DURATION_S, MAX_DURATION_S + 0.5]),
    st.sampled_from([MAX_GPUS, MAX_GPUS + 1, 2**31 - 1, 2**31, -(2**31) - 1, 10**30]),
)


def mostly(valid: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """A valid value most of the time, anything at all otherwise."""
    return st.integers(0, 9).flatmap(lambda n: values if n == 0 else valid)


VALID = {
    "id": st.sampled_from(["j", "k"]),
    "submit": st.floats(0, 1e6),
    "account": st.just("a"),
    "gpus": st.sampled_from([8, 16, 24]),
    "work": st.floats(1, 1e6),
    "user": st.just("u"),
    "gpus_per_node": st.sampled_from([1, 2, 4, 8]),
    "min_runtime": st.one_of(st.none(), st.floats(0, 1e5)),
    "resumable": st.booleans(),
    "checkpoint_interval": st.floats(1, 1e4),
    "priority": st.integers(-5, 5),
    "kind": st.sampled_from(JOB_KINDS),
    "deadline": st.floats(1e6, 2e6),
    "gpu_type": st.just("h100"),
    "type": st.just("job"),
}
REQUIRED = ("id", "submit", "account", "gpus", "work")


@settings(max_examples=400, deadline=None)
@given(
    st.fixed_dictionaries(
        {k: mostly(VALID[k]) for k in REQUIRED},
        optional={k: mostly(v) for k, v in VALID.items() if k not in REQUIRED},
    )
)
def test_fast_path_agrees_with_the_full_checker(d: dict[str, object]) -> None:
    from allotment.traces.diagnostics import DiagnosticCollector
    from allotment.traces.job_lines import checked_job, fast_job
    from allotment.traces.line_checker import LineChecker

    fast = fast_job(dict(d))
    diags = DiagnosticCollector("t", cap=10_000)
    slow = checked_job(LineChecker("", 1, diags), dict(d))
    assert fast == slow  # the fast path is exact for lines without dependencies
    assert (slow is None) == bool(diags)
