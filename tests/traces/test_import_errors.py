"""Bad SWF and Alibaba lines: every one reported at its line and column, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.traces.diagnostics import TraceDiagnostics
from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import AlibabaImporter, SwfImporter
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
