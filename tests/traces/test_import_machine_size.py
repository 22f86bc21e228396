"""Issue 32, item 10: importers refuse what the source itself says cannot be (an SWF job larger
than the machine its own header describes imported with exit 0; sacct ``gres/gpu=nan`` was
skipped as "no GPUs"), at the line and column, writing nothing."""

from __future__ import annotations

from pathlib import Path

from allotment.traces.importers import SacctImporter, SwfImporter
from tests.traces.test_import_errors import GOOD, _errors


def test_swf_job_larger_than_the_machine_its_header_describes_is_an_error(tmp_path: Path) -> None:
    big = "2 5 -1 10 9 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1"  # 9 processors on an 8-processor machine
    errors = _errors(tmp_path, SwfImporter(), "t.swf", f"; MaxProcs: 8\n{GOOD}\n{big}\n")
    assert errors == [
        "t.swf:3:11: a job of 9 processors is larger than the machine its header describes "
        "(MaxProcs 8); it could never run there"
    ]


def test_sacct_gpu_count_that_is_not_a_number_is_an_error_not_no_gpus(tmp_path: Path) -> None:
    text = (
        "JobID|Account|Submit|Elapsed|AllocTRES\n"
        "1|a|2026-01-01T00:00:00|00:10:00|cpu=4,gres/gpu=2\n"
        "2|a|2026-01-01T00:00:00|00:10:00|cpu=4,gres/gpu=nan\n"
        "3|a|2026-01-01T00:00:00|00:10:00|cpu=4,gres/gpu:h100=-1\n"
    )
    errors = _errors(tmp_path, SacctImporter(), "s.txt", text)
    assert errors == [
        "s.txt:3:34: AllocTRES: gres/gpu='nan' is not a whole number of GPUs",
        "s.txt:4:34: AllocTRES: gres/gpu:h100='-1' is not a whole number of GPUs",
    ]
