"""The import pipeline: bounded-memory sorting, all-or-nothing output, duplicate ids."""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.traces.canonical import read_trace
from allotment.traces.diagnostics import TraceDiagnostics
from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import CsvImporter, parse_map
from allotment.traces.pipeline import import_trace
from allotment.traces.sorting import external_sort

MAP = parse_map("id=id,submit=t,work=w,gpus=g,account=a")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 50), st.integers()), max_size=300),
    st.integers(1, 40),
    st.integers(2, 5),
)
def test_external_sort_equals_a_stable_in_memory_sort(
    items: list[tuple[int, int]], chunk: int, fanin: int
) -> None:
    got = list(external_sort(items, key=lambda x: x[0], chunk=chunk, fanin=fanin))
    assert got == sorted(items, key=lambda x: x[0])


def _csv(path: Path, rows: list[tuple[str, int, int, int, str]]) -> None:
    path.write_text("id,t,w,g,a\n" + "".join(f"{i},{t},{w},{g},{a}\n" for i, t, w, g, a in rows))


def test_unsorted_source_gives_the_same_trace_whatever_the_chunk(tmp_path: Path) -> None:
    rng = random.Random(7)
    rows = [
        (
            f"j{i}",
            rng.randrange(10_000),
            rng.randrange(1, 999),
            rng.choice([1, 2, 8]),
            rng.choice("xyz"),
        )
        for i in range(2000)
    ]
    src = tmp_path / "jobs.csv"
    _csv(src, rows)
    import_trace(CsvImporter(mapping=MAP), src, tmp_path / "a.jsonl", fill=FillRules())
    import_trace(
        CsvImporter(mapping=MAP), src, tmp_path / "b.jsonl", fill=FillRules(), sort_chunk=64
    )
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    jobs = read_trace(tmp_path / "a.jsonl").jobs
    assert [j.submit for j in jobs] == sorted(j.submit for j in jobs)
    assert len(jobs) == 2000


def test_a_bad_row_leaves_no_output_and_keeps_an_old_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    src = tmp_path / "jobs.csv"
    _csv(src, [("a", 0, 10, 1, "x"), ("b", 5, 10, -1, "x")])
    with pytest.raises(TraceDiagnostics):
        import_trace(CsvImporter(mapping=MAP), src, out, fill=FillRules())
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv", "out.jsonl"]


def test_duplicate_source_ids_are_errors_at_the_source_lines(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    _csv(src, [("a", 9, 10, 1, "x"), ("b", 5, 10, 1, "x"), ("a", 1, 10, 1, "x")])
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(
            CsvImporter(mapping=MAP),
            src,
            tmp_path / "o.jsonl",
            fill=FillRules(),
            display_name="jobs.csv",
        )
    assert [d.format() for d in info.value.diagnostics] == [
        "jobs.csv:4:1: duplicate job id 'a': line 2 has it too"
    ]
    assert not (tmp_path / "o.jsonl").exists()


def test_every_error_is_reported_up_to_the_cap(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("id,t,w,g,a\n" + "".join(f"j{i},{i},10,x,a\n" for i in range(300)))
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(CsvImporter(mapping=MAP), src, tmp_path / "o.jsonl", fill=FillRules())
    msgs = [d.message for d in info.value.diagnostics]
    assert len(msgs) == 101 and msgs[0] == "stopped after 100 errors; fix these first"


def test_empty_source_writes_a_header_only_trace(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("id,t,w,g,a\n")
    r = import_trace(CsvImporter(mapping=MAP), src, tmp_path / "o.jsonl", fill=FillRules())
    assert r.imported == 0 and read_trace(tmp_path / "o.jsonl").jobs == ()


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        (
            gzip.compress(b"id,t,w,g,a\n" + b"x,1,1,1,a\n" * 500)[:-40],
            r":1:1: cannot read this line",
        ),
        (b"id,t,w,g,a\n\xff\xfe,1,1,1,a\n", r":2:1: byte 0xff is not UTF-8"),
        (b"id,t,w,g,a\nx\xff,1,1,1,a\n", r":2:2: byte 0xff is not UTF-8"),
    ],
    ids=["truncated gzip", "not utf-8", "not utf-8 mid-line"],
)
def test_unreadable_input_is_a_positioned_error(tmp_path: Path, payload: bytes, where: str) -> None:
    src = tmp_path / "jobs.csv"
    src.write_bytes(payload)
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(CsvImporter(mapping=MAP), src, tmp_path / "o.jsonl", fill=FillRules())
    assert re.search(re.escape(str(src)) + where, str(info.value)), str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv"]


def test_corrupt_gzip_data_is_a_positioned_error_not_zlib_error(tmp_path: Path) -> None:
    good = gzip.compress(b"id,t,w,g,a\n" + b"x,1,1,1,a\n" * 50)
    src = tmp_path / "jobs.csv"
    src.write_bytes(good[:10] + bytes([good[10] ^ 0xFF]) + good[11:])  # zlib: invalid code lengths
    with pytest.raises(TraceDiagnostics, match=re.escape(str(src)) + r":\d+:1: cannot read"):
        import_trace(CsvImporter(mapping=MAP), src, tmp_path / "o.jsonl", fill=FillRules())


def test_window_clips_running_jobs_and_drops_the_rest(tmp_path: Path) -> None:
    from allotment.traces.pipeline import Window

    src = tmp_path / "jobs.csv"
    # first submit at 1000: the window [100, 500) is trace time 1100 .. 1500 in the source
    _csv(
        src,
        [
            ("first", 1000, 50, 1, "x"),  # done before the window opens: dropped
            ("long", 1010, 1000, 2, "x"),  # running at 1100: starts at 0 with 910 s left
            ("inside", 1200, 30, 1, "y"),  # kept, at 100
            ("late", 1500, 30, 1, "y"),  # at the window's end: dropped
        ],
    )
    r = import_trace(
        CsvImporter(mapping=MAP),
        src,
        tmp_path / "o.jsonl",
        fill=FillRules(),
        window=Window(since=100, until=500),
    )
    jobs = read_trace(tmp_path / "o.jsonl").jobs
    assert [(j.id, j.submit, j.work) for j in jobs] == [("long", 0, 910), ("inside", 100, 30)]
    assert r.skipped == {"before the --since window": 1, "after the --until window": 1}
    assert r.notes == {"running when the --since window opens (clipped to its rest)": 1}
