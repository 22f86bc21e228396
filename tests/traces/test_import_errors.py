"""Bad SWF and Alibaba lines: every one reported at its line and column, nothing written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from allotment.traces.diagnostics import TraceDiagnostics
from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import (
    AlibabaImporter,
    CsvImporter,
    SacctImporter,
    SwfImporter,
    parse_map,
)
from allotment.traces.importers.alibaba import POD_COLUMNS
from allotment.traces.pipeline import import_trace

GOOD = "1 0 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1"


def _errors(tmp_path: Path, importer: object, name: str, text: str) -> list[str]:
    src = tmp_path / name
    src.write_text(text)
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(importer, src, tmp_path / "o.jsonl", fill=FillRules(), display_name=name)  # type: ignore[arg-type]
    assert not (tmp_path / "o.jsonl").exists()
    return [d.format() for d in info.value.diagnostics]


def test_swf_field_count_type_and_sign_errors(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "; MaxProcs: 8",
            GOOD,
            "2 5 -1 10 4",
            "3 7 -1 10 four -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1",
            "4 -9 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1",
        ]
    )
    assert _errors(tmp_path, SwfImporter(), "t.swf", text) == [
        "t.swf:3:1: an SWF job line has 18 fields, this one has 5",
        "t.swf:4:11: SWF fields are integers, got 'four'",
        "t.swf:5:3: submit time must not be negative, got -9",
    ]


def test_swf_requested_processors_stand_in_for_missing_allocated(tmp_path: Path) -> None:
    src = tmp_path / "t.swf"
    src.write_text(
        "1 0 -1 10 -1 -1 -1 16 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n2 1 -1 10 -1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n"
    )
    r = import_trace(SwfImporter(gpus_per_proc=0.5), src, tmp_path / "o.jsonl", fill=FillRules())
    assert r.imported == 1 and r.skipped == {"processors missing": 1}
    assert r.stats.max_job_gpus == 8


def test_alibaba_header_and_cell_errors(tmp_path: Path) -> None:
    assert _errors(tmp_path, AlibabaImporter(), "pods.csv", "name,num_gpu\n") == [
        f"pods.csv:1:1: expected the Alibaba pod-list header {','.join(POD_COLUMNS)}"
    ]
    header = ",".join(POD_COLUMNS)
    text = f"{header}\np0,1000,1,one,1000,,LS,Running,0,10,0\np1,1000,1,1,1000,,LS,Running,0,10\n"
    assert _errors(tmp_path, AlibabaImporter(), "pods.csv", text) == [
        "pods.csv:2:11: num_gpu must be an integer, got 'one'",
        "pods.csv:3:1: expected 11 columns, got 10",
    ]


def _swf(*fields: tuple[int, str]) -> str:
    """GOOD with some 1-based SWF fields replaced."""
    cells = GOOD.split()
    for index, value in fields:
        cells[index - 1] = value
    return " ".join(cells)


def test_swf_negative_run_time_and_absurd_sizes_are_errors_not_skips(tmp_path: Path) -> None:
    lines = [GOOD, _swf((1, "2"), (4, "-5")), _swf((1, "3"), (5, "1" + "0" * 30))]
    lines.append(_swf((1, "4"), (2, "1" + "0" * 300)))
    col_rt = lines[1].index("-5") + 1
    col_procs = lines[2].index("1" + "0" * 30) + 1
    assert _errors(tmp_path, SwfImporter(), "t.swf", "\n".join(lines)) == [
        f"t.swf:2:{col_rt}: run time must be 0 or more, got -5",
        f"t.swf:3:{col_procs}: gpus 1e+30 is beyond the trace bound of 1,048,576 GPUs",
        "t.swf:4:1: submit 1e+300 s is beyond the trace bound of 315,360,000 s (10 years), "
        "counted from the first submit",
    ]


def test_swf_unknown_run_time_is_still_a_counted_skip(tmp_path: Path) -> None:
    src = tmp_path / "t.swf"
    src.write_text(GOOD + "\n" + _swf((1, "2"), (4, "-1")) + "\n")
    r = import_trace(SwfImporter(), src, tmp_path / "o.jsonl", fill=FillRules())
    assert r.imported == 1 and r.skipped == {"run time missing": 1}


def test_sacct_end_before_start_is_an_error_not_zero_run_time(tmp_path: Path) -> None:
    head = "JobID|Account|Submit|Start|End|AllocTRES"
    rows = [
        "1|nlp|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|gres/gpu=8",
        "2|nlp|2024-03-01T08:00:00|2024-03-01T09:00:00|2024-03-01T08:00:00|gres/gpu=8",
        "3|nlp|2024-03-01T08:00:00|2024-03-01T08:00:00|2999-03-01T09:00:00|gres/gpu=8",
    ]
    col_end = rows[1].index("2024-03-01T08:00:00|gres") + 1
    far = (dt.datetime(2999, 3, 1, 9) - dt.datetime(2024, 3, 1, 8)).total_seconds()
    assert _errors(tmp_path, SacctImporter(), "s.txt", "\n".join([head, *rows])) == [
        f"s.txt:3:{col_end}: run time must be 0 or more, got -3600",
        f"s.txt:4:{col_end}: run time {far:g} s is beyond the trace bound of 31,622,400 s "
        "(366 days)",
    ]


def test_csv_negative_work_and_huge_gpus_are_errors_at_their_columns(tmp_path: Path) -> None:
    text = "id,t,w,g,a\nj1,0,60,8,a\nj2,1,-60,8,a\nj3,2,60,99999999,a\nj4,3,1e308,8,a\n"
    importer = CsvImporter(mapping=parse_map(["id=id,submit=t,work=w,gpus=g,account=a"]))
    assert _errors(tmp_path, importer, "j.csv", text) == [
        "j.csv:3:6: run time must be 0 or more, got -60",
        "j.csv:4:9: gpus 1e+08 is beyond the trace bound of 1,048,576 GPUs",
        "j.csv:5:6: run time 1e+308 s is beyond the trace bound of 31,622,400 s (366 days)",
    ]


def test_alibaba_deleted_before_scheduled_is_an_error(tmp_path: Path) -> None:
    header = ",".join(POD_COLUMNS)
    row = "p0,1000,1,1,1000,,LS,Running,0,5,10"  # deleted at 5, scheduled at 10
    col = row.index(",5,10") + 2  # deletion_time
    assert _errors(tmp_path, AlibabaImporter(), "pods.csv", f"{header}\n{row}\n") == [
        f"pods.csv:2:{col}: run time must be 0 or more, got -5"
    ]


def test_swf_infinite_field_is_an_error_not_an_overflow(tmp_path: Path) -> None:
    line = _swf((4, "1e400"))
    assert _errors(tmp_path, SwfImporter(), "t.swf", line + "\n") == [
        f"t.swf:1:{line.index('1e400') + 1}: SWF fields are integers, got '1e400'"
    ]
