"""A trace job that cannot replay on the config is an error, the same at check, import and
simulate (issues 10.10 and 14.12): unknown or inner accounts would be charged outside every
team, unknown GPU types and jobs larger than the cluster would silently never run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.traces.diagnostics import TraceDiagnostics
from allotment.traces.fill_rules import FillRules
from allotment.traces.importers import CsvImporter, parse_map
from allotment.traces.job_fit import job_fit
from allotment.traces.pipeline import ImportChecks, import_trace

AT = ["--at", "2026-11-29"]


def _job(i: str, submit: float, **extra: object) -> dict[str, object]:
    return {"id": i, "submit": submit, "account": "molmo", "gpus": 8, "work": 600, **extra}


BAD = [
    _job("ok", 0),
    _job("nosuch", 1, account="nosuch"),
    _job("inner", 2, account="ai2"),
    _job("type", 3, gpu_type="z100"),
    _job("huge", 4, gpus=100_000),
    _job("wide", 5, gpus=16, gpus_per_node=16),
    _job("loop1", 6, work=1e18),
    _job("c1", 7, depends_on=["c2"]),
    _job("c2", 8, depends_on=["c1"]),
]


def _col(job: dict[str, object], key: str) -> int:
    return json.dumps(job).index(f'"{key}"') + 1


EXPECTED = [
    f"t.jsonl:2:{_col(BAD[1], 'account')}: unknown account 'nosuch': no budget leaf has that name",
    f"t.jsonl:3:{_col(BAD[2], 'account')}: account 'ai2' is not a leaf budget; "
    "a job charges one leaf",
    f"t.jsonl:4:{_col(BAD[3], 'gpu_type')}: unknown GPU type 'z100' on cluster h100 (it has h100)",
    f"t.jsonl:5:{_col(BAD[4], 'gpus')}: a job of 100,000 GPUs can never fit cluster h100 "
    "(1,024 GPUs, at most 8 a node)",
    f"t.jsonl:6:{_col(BAD[5], 'gpus')}: a job of 16 GPUs (16 a node) can never fit cluster h100 "
    "(1,024 GPUs, at most 8 a node)",
    f"t.jsonl:7:{_col(BAD[6], 'work')}: work 1e+18 s is beyond the trace bound of 31,622,400 s "
    "(366 days)",
    f"t.jsonl:8:{_col(BAD[7], 'depends_on')}: dependency cycle 'c1' -> 'c2' -> 'c1': "
    "these jobs would wait for each other forever",
]


@pytest.fixture
def bad_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in BAD))
    return Path("t.jsonl")


def _stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()


def test_trace_check_with_repo_reports_every_job_that_cannot_replay(
    bad_trace: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["trace", "check", str(bad_trace), "--repo", str(repo_root), *AT])
    assert code == 2
    assert _stderr_lines(capsys) == EXPECTED


def test_simulate_runs_the_same_checks_before_simulating(
    bad_trace: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["simulate", "--trace", str(bad_trace), "--repo", str(repo_root), *AT])
    assert code == 2
    out = capsys.readouterr()
    assert out.err.splitlines() == EXPECTED and "Traceback" not in out.err
    assert "policy" not in out.out  # nothing was simulated


def test_trace_check_without_repo_checks_the_format_only(
    bad_trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trace", "check", str(bad_trace)]) == 2
    assert _stderr_lines(capsys) == [e for e in EXPECTED if ":7:" in e or ":8:" in e]


def test_trace_check_without_repo_finds_the_config_repo_as_validate_does(
    bad_trace: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 32, item 11: run from inside a config repository, ``trace check`` checks the
    accounts, GPU types and sizes against it, as ``allot validate`` finds the same repository."""
    trace = bad_trace.resolve()
    monkeypatch.chdir(repo_root / "budgets")
    assert main(["trace", "check", str(trace), *AT]) == 2
    assert _stderr_lines(capsys) == [e.replace("t.jsonl", str(trace), 1) for e in EXPECTED]


def test_a_trace_that_fits_passes_check_with_repo(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps(_job("ok", 0, gpu_type="h100", gpus=16)) + "\n")
    assert main(["trace", "check", str(path), "--repo", str(repo_root), *AT]) == 0
    assert "every job replays on h100" in capsys.readouterr().out


CSV = "id,t,w,g,a\nj1,0,60,8,molmo\nj2,1,60,8,Vision Team\nj3,2,60,8,ai2\nj4,3,60,9000,molmo\n"
MAP = parse_map(["id=id,submit=t,work=w,gpus=g,account=a"])


def _fit(repo_root: Path):  # type: ignore[no-untyped-def]
    return job_fit(compile_repo(repo_root, dt.date(2026, 11, 29)))


def test_import_against_a_config_refuses_unknown_accounts_at_their_source_line(
    tmp_path: Path, repo_root: Path
) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text(CSV)
    with pytest.raises(TraceDiagnostics) as info:
        import_trace(
            CsvImporter(mapping=MAP),
            src,
            tmp_path / "o.jsonl",
            fill=FillRules(),
            display_name="jobs.csv",
            checks=ImportChecks(fit=_fit(repo_root)),
        )
    assert [d.format() for d in info.value.diagnostics] == [
        "jobs.csv:3:1: unknown account 'vision-team': no budget leaf has that name",
        "jobs.csv:4:1: account 'ai2' is not a leaf budget; a job charges one leaf",
        "jobs.csv:5:1: a job of 9,000 GPUs can never fit cluster h100 (1,024 GPUs, at most 8 a node)",
    ]
    assert not (tmp_path / "o.jsonl").exists()


def test_account_map_charges_a_source_account_to_a_leaf(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text(CSV.replace("j4,3,60,9000", "j4,3,60,16"))
    out = tmp_path / "o.jsonl"
    code = main(
        [
            "trace", "import", "--format", "csv", str(src), "-o", str(out), "-q",
            "--map", "id=id,submit=t,work=w,gpus=g,account=a",
            "--account-map", "Vision Team=molmo", "--account-map", "ai2=tulu",
            "--repo", str(repo_root), *AT,
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    accounts = [json.loads(x).get("account") for x in out.read_text().splitlines()[1:]]
    assert accounts == ["molmo", "molmo", "tulu", "molmo"]


def test_simulate_of_a_corrupt_gzip_trace_is_a_positioned_error_not_zlib_error(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    body = "".join(json.dumps(_job(f"j{i}", i)) + "\n" for i in range(50)).encode()
    good = gzip.compress(body)
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(good[:10] + bytes([good[10] ^ 0xFF]) + good[11:])
    assert main(["simulate", "--trace", str(path), "--repo", str(repo_root), *AT]) == 2
    (err,) = _stderr_lines(capsys)
    assert err.startswith(f"{path}:1:1: cannot read this line: Error -3 while decompressing")


def test_generate_refuses_more_days_than_a_trace_may_span(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.jsonl"
    args = ["trace", "generate", "--scenario", "ai2", "--days", "4000", "-o", str(out)]
    assert main([*args, "--repo", str(repo_root), *AT]) == 2
    assert "a trace spans at most 3650 days" in _stderr_lines(capsys)[0]
    assert not out.exists()


def test_simulate_refuses_a_horizon_beyond_the_trace_bound(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(_job("a", 0)) + "\n")
    args = ["simulate", "--trace", str(path), "--repo", str(repo_root), *AT, "--days", "1e9"]
    assert main(args) == 2  # was a MemoryError: one value per simulated hour
    assert "--days must be positive and at most 3650" in _stderr_lines(capsys)[0]


def test_a_leaf_without_a_budget_on_the_cluster_is_refused_there(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """molmo has no budget on b200: its jobs ran there, charged to no team in the table."""
    path = tmp_path / "b.jsonl"
    jobs = [_job("a", 0, account="molmo"), _job("b", 1, account="tulu")]
    path.write_text("".join(json.dumps(x) + "\n" for x in jobs))
    args = ["simulate", "--trace", str(path), "--repo", str(repo_root), *AT, "--cluster", "b200"]
    assert main(args) == 2
    assert _stderr_lines(capsys) == [
        f"{path}:1:{_col(jobs[0], 'account')}: account 'molmo' has no budget on cluster b200 "
        "(the leaf is not available there, or is outside its validity dates)"
    ]
    assert main([*args[:-1], "h100"]) == 0  # the same trace replays where molmo has a budget
