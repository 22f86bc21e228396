"""``allot validate``, ``allot compile`` and ``allot schema`` end to end through ``main``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.config.corpus import BASE

AT = ["--at", "2026-06-01"]


def test_validate_bundled_example_exits_zero(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--repo", str(repo_root), *AT]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("ok: 28 budget nodes (15 leaves)")
    assert out.err == ""


def test_compile_json_is_parseable_and_names_the_revision(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compile", "--repo", str(BASE), *AT, "--format", "json", "--revision", "r1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["revision"] == "r1"
    assert [n["name"] for n in data["nodes"]] == ["acme", "ops", "research", "language", "vision"]


def test_compile_table_shows_percentages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "--repo", str(BASE), *AT]) == 0
    out = capsys.readouterr().out
    assert "  research    75.0%" in out


def test_compile_target_slurm_calls_the_slurm_renderer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import allotment.cli.cmd_compile as cmd

    seen = []
    monkeypatch.setattr(cmd, "render_slurm", lambda cfg, cluster: seen.append(cluster) or "X\n")
    assert main(["compile", "--repo", str(BASE), *AT, "--target", "slurm", "--cluster", "big"]) == 0
    assert seen == ["big"]
    assert capsys.readouterr().out == "X\n"


def test_warnings_go_to_stderr_and_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    shutil.copytree(BASE, repo)
    (repo / "budgets/acme/ops/budget.yaml").write_text("owners: [ops@acme.example]\n")
    assert main(["compile", "--repo", str(repo), *AT, "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["root"] == "acme"
    assert out.err == "budgets/acme/ops/budget.yaml:1:1: warning: leaf 'ops' has no members\n"


def test_errors_are_all_reported_sorted_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    shutil.copytree(BASE, repo)
    (repo / "budgets/acme/ops/budget.yaml").write_text("owners: [x]\nmembers: [Dave]\n")
    (repo / "policies/scheduler.yaml").write_text("lookback: soon\n")
    assert main(["compile", "--repo", str(repo), *AT]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert lines == sorted(lines)
    assert len(lines) == 3


def test_missing_repo_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--repo", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_bad_date_argument_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--at", "tomorrow"])
    assert exc.value.code == 2
    assert "expected a date YYYY-MM-DD" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["budget", "cluster", "gpu-types", "scheduler", "boosts"])
def test_schema_prints_the_shipped_schema(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", kind]) == 0
    assert json.loads(capsys.readouterr().out)["$schema"].startswith("https://json-schema.org/")


def test_schema_unknown_kind_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["schema", "budgets"])
    assert exc.value.code == 2
