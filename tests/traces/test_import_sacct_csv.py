"""sacct -P and mapped CSV importers on small realistic files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from allotment.errors import UsageError
from allotment.traces.canonical import read_trace
from allotment.traces.diagnostics import TraceDiagnostics
from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import CsvImporter, SacctImporter, parse_map
from allotment.traces.pipeline import import_trace

from .conftest import SACCT


def test_sacct_skips_steps_and_unstarted_jobs_and_reads_tres(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    r = import_trace(SacctImporter(), SACCT, out, fill=FillRules())
    assert r.records == 9  # allocation lines only; .batch/.extern/.0 steps are not records
    assert r.skipped == {
        "never started": 1,
        "no GPUs": 1,
        "pending array placeholder": 1,
        "zero run time": 1,
    }
    jobs = {j.id: j for j in read_trace(out).jobs}
    assert sorted(jobs) == ["41001", "41002", "41004_1", "41004_2", "41005"]
    big = jobs["41001"]
    assert (big.gpus, big.gpus_per_node, big.gpu_type, big.work, big.submit) == (
        16,
        8,
        "a100",
        43200,
        0,
    )
    assert jobs["41004_1"].work == 26 * 3600  # Elapsed 1-02:00:00
    assert jobs["41002"].submit == 300 and jobs["41002"].kind == "debug"
    assert jobs["41005"].account == "safety-team" and r.renamed_accounts == {
        "Safety-Team": "safety-team"
    }
    assert r.start_iso == "2024-03-01T08:00:00+00:00"


def test_sacct_account_from_qos(tmp_path: Path) -> None:
    import_trace(SacctImporter(account_from="qos"), SACCT, tmp_path / "s.jsonl", fill=FillRules())
    assert {j.account for j in read_trace(tmp_path / "s.jsonl").jobs} == {
        "normal",
        "debug",
        "scavenger",
    }


def test_sacct_without_required_fields_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("JobID|User|Submit\n1|a|2024-01-01T00:00:00\n")
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(
            SacctImporter(), bad, tmp_path / "o.jsonl", fill=FillRules(), display_name="bad.txt"
        )
    [d] = info.value.diagnostics
    assert d.format().startswith("bad.txt:1:1: sacct header lacks Account, AllocTRES, Elapsed")
    assert not (tmp_path / "o.jsonl").exists()


def test_sacct_bad_timestamp_is_positioned(tmp_path: Path) -> None:
    lines = SACCT.read_text().splitlines()
    lines[1] = lines[1].replace("2024-03-01T08:00:00", "yesterday", 1)
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(
            SacctImporter(), bad, tmp_path / "o.jsonl", fill=FillRules(), display_name="bad.txt"
        )
    [d] = info.value.diagnostics
    col = lines[1].index("yesterday") + 1
    assert (
        d.format()
        == f"bad.txt:2:{col}: Submit must be an ISO date-time or seconds, got 'yesterday'"
    )


CSV = """job,when,start,end,gpus,team,who,kind
a,2024-05-01T10:00:00,2024-05-01T10:00:10,2024-05-01T12:00:10,8,Team A,Alice,train
b,2024-05-01T09:00:00,2024-05-01T09:30:00,2024-05-01T09:35:00,1,team-b,bob,
c,2024-05-01T11:00:00,,,2,team-b,bob,
d,2024-05-01T11:30:00,2024-05-01T11:30:00,2024-05-01T11:40:00,0,team-b,bob,
"""


def test_csv_with_start_and_end_columns_sorts_and_rebases(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text(CSV)
    m = parse_map(
        "id=job,submit=when,start=start,end=end,gpus=gpus,account=team,user=who,kind=kind"
    )
    r = import_trace(CsvImporter(mapping=m), src, tmp_path / "o.jsonl", fill=FillRules())
    jobs = read_trace(tmp_path / "o.jsonl").jobs
    assert [j.id for j in jobs] == ["b", "a"]  # sorted by submit, rebased to the first
    assert [j.submit for j in jobs] == [0, 3600]
    assert jobs[1].work == 7200 and jobs[1].kind == "train" and jobs[1].account == "team-a"
    assert jobs[0].kind == "debug"  # empty cell: the auto rule (5 min, 1 GPU)
    assert r.skipped == {"no run time (start or end empty)": 1, "no GPUs": 1}


def test_csv_seconds_and_durations(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("t;dur;n;acct;mr\n100;1:00:00;4;x;0\n50;90;2;y;15m\n")
    m = parse_map(["submit=t,work=dur", "gpus=n,account=acct,min_runtime=mr"])
    import_trace(CsvImporter(mapping=m, delimiter=";"), src, tmp_path / "o.jsonl", fill=FillRules())
    jobs = read_trace(tmp_path / "o.jsonl").jobs
    assert [(j.id, j.submit, j.work, j.min_runtime) for j in jobs] == [
        ("3", 0, 90, 900),
        ("2", 50, 3600, 0),
    ]


def test_csv_errors_are_all_reported_with_positions(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("submit,work,gpus,account\n0,10,x,a\n5,-,2,a\n,10,2,a\n")
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(
            CsvImporter(mapping=parse_map("submit=submit,work=work,gpus=gpus,account=account")),
            src,
            tmp_path / "o.jsonl",
            fill=FillRules(),
            display_name="jobs.csv",
        )
    assert [d.format() for d in info.value.diagnostics] == [
        "jobs.csv:2:6: column 'gpus': gpus must be an integer, got 'x'",
        "jobs.csv:3:3: column 'work': work must be seconds, [D-]HH:MM:SS or like 2h, got '-'",
        "jobs.csv:4:1: submit (column 'submit') is empty",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("submit=a,gpus=b", "--map lacks account, work (or start and end)"),
        ("submit=a,gpus=b,account=c,work=d,colour=e", "unknown field 'colour'"),
        ("submit=a,submit=b", "mapped twice"),
        ("submit", "expects FIELD=COLUMN"),
    ],
)
def test_bad_map_is_a_usage_error(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_map(text)


def test_csv_map_naming_missing_column(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("a,b\n1,2\n")
    with pytest.raises(TraceDiagnostics, match="--map names columns not in the header: x, y"):
        import_trace(
            CsvImporter(mapping=parse_map("submit=x,work=y,gpus=a,account=b")),
            src,
            tmp_path / "o.jsonl",
            fill=FillRules(),
        )
