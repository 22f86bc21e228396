"""`allot trace import | generate | check` end to end through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.traces.canonical import read_trace

from .conftest import ALIBABA_DIR, SACCT


def test_import_sacct_with_repo_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, repo = tmp_path / "t.jsonl", tmp_path / "repo"
    code = main(
        [
            "trace",
            "import",
            "--format",
            "sacct",
            str(SACCT),
            "-o",
            str(out),
            "--repo-out",
            str(repo),
            "--gpus",
            "32",
            "--fill",
            "min_runtime=1h",
            "--summary-json",
            str(tmp_path / "s.json"),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert f"imported 5 of 9 records from {SACCT} (sacct) into {out}" in text
    assert "skipped         1  no GPUs" in text
    assert all(j.min_runtime == 3600 for j in read_trace(out).jobs)
    assert (
        compile_repo(repo, __import__("datetime").date(2026, 1, 1)).clusters["imported"].gpus == 32
    )
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["imported"] == 5 and summary["skipped"]["never started"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo", "s.json", "t.jsonl"]


def test_bad_input_exits_2_with_positions_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "bad.swf"
    src.write_text(
        "; Version: 2.2\n1 0 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n2 5 -1 ten 4\n"
    )
    code = main(
        [
            "trace",
            "import",
            "--format",
            "swf",
            str(src),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--repo-out",
            str(tmp_path / "repo"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err == f"{src}:3:8: SWF fields are integers, got 'ten'\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.swf"]


def test_repo_out_failure_leaves_no_trace_either(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "trace",
            "import",
            "--format",
            "sacct",
            str(SACCT),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--repo-out",
            str(tmp_path / "repo"),
            "--gpus",
            "16",
        ]
    )
    assert code == 2
    assert "16-GPU a100 job but the cluster would have 8 a100 GPUs" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--format", "csv"], "--format csv needs --map"),
        (["--format", "swf", "--account-from", "qos"], "--account-from for swf takes group, queue"),
        (["--format", "sacct", "--map", "submit=a"], "--map is only for --format csv"),
        (["--format", "sacct", "--fill", "nope"], "--fill expects KEY=VALUE"),
        (
            ["--format", "csv", "--map", "submit=a,work=b,gpus=c,account=d", "--delimiter", "::"],
            "one character",
        ),
        (
            ["--format", "sacct", "--repo-out", "r", "--cluster", "My Cluster"],
            "--cluster 'My Cluster'",
        ),
        (
            ["--format", "sacct", "--repo-out", "r", "--owner", "nobody"],
            "expected an e-mail or @handle",
        ),
        (["--format", "sacct", "--repo-out", "r"], "exists and is not an empty folder"),
        (
            ["--format", "sacct", "--since", "2d", "--until", "1d"],
            "--until must be later than --since",
        ),
        (["--format", "sacct", "-o", "r"], "is a folder"),
    ],
)
def test_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    argv = [str(tmp_path / "r") if a == "r" else a for a in argv]  # never write into the cwd
    if "exists" in message or "folder" in message:
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "keep.txt").write_text("mine")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    code = main(["trace", "import", str(SACCT), "-o", str(tmp_path / "o.jsonl"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_alibaba_node_list_is_found_next_to_the_pods(
    alibaba_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "trace",
            "import",
            "--format",
            "alibaba-gpu",
            str(alibaba_path),
            "-o",
            str(tmp_path / "a.jsonl.gz"),
            "--repo-out",
            str(tmp_path / "repo"),
            "--account-from",
            "single",
        ]
    )
    assert code == 0
    assert (
        "cluster: 6,212 GPUs on 1,213 nodes (node list openb_node_list_gpu_node.csv)"
        in capsys.readouterr().out
    )
    config = compile_repo(tmp_path / "repo", __import__("datetime").date(2026, 1, 1))
    assert [n.name for n in config.leaves()] == ["alibaba"]
    assert ALIBABA_DIR.exists()


def test_check_reports_a_valid_trace_and_rejects_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # outside any config repository: the format only
    good = tmp_path / "g.jsonl"
    good.write_text('{"id":"a","submit":0,"account":"t","gpus":2,"work":3600}\n')
    assert main(["trace", "check", str(good)]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 jobs, 0 node events, 1 accounts, 2 GPU-hours")
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"id":"a","submit":0,"account":"t","gpus":2}\n')
    assert main(["trace", "check", str(bad)]) == 2
    assert capsys.readouterr().err == f"{bad}:1:1: job line is missing required key 'work'\n"


def test_generate_round_trips_the_scenario_exactly(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from allotment.traces.scenarios import get_scenario
    from allotment.traces.scenarios.workload import Workload

    out = tmp_path / "ai2.jsonl"
    args = [
        "--scenario",
        "ai2",
        "--days",
        "1",
        "--seed",
        "5",
        "--repo",
        str(repo_root),
        "--at",
        "2026-12-01",
    ]
    assert main(["trace", "generate", *args, "-o", str(out)]) == 0
    assert main(["trace", "generate", *args, "-o", str(tmp_path / "again.jsonl")]) == 0
    assert out.read_bytes() == (tmp_path / "again.jsonl").read_bytes()
    config = compile_repo(repo_root, __import__("datetime").date(2026, 12, 1))
    cluster = config.largest_cluster()
    expected = get_scenario("ai2")(config, cluster=cluster, days=1, seed=5)
    t = read_trace(out)
    assert Workload.of(t.jobs, t.node_events) == expected
    assert t.header["seed"] == 5 and t.header["cluster"] == cluster
    assert "wrote" in capsys.readouterr().out
