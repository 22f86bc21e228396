"""``allot reconcile`` and ``allot status --reconciler`` end to end (sim backend, git source)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.errors import BackendError
from allotment.reconcile.health import parse_health
from tests.reconcile.repo import commit_all, head


def test_reconcile_once_then_status(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st"
    argv = [
        "reconcile",
        "--backend",
        "sim",
        "--source",
        str(config_repo),
        "--state",
        str(state),
        "--once",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"revision {head(config_repo)[:12]}: applied=")
    assert main(argv) == 0
    assert capsys.readouterr().out == f"revision {head(config_repo)[:12]}: no actions\n"
    assert main(["status", "--reconciler", "--state", str(state)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"Ready +True  Synced", text) and head(config_repo) in text
    assert main(["status", "--reconciler", "--state", str(state), "--json"]) == 0
    raw = json.loads(capsys.readouterr().out)
    assert raw["backend"] == "sim" and raw["cluster"] == "gpulab" and raw["ticks"] == 2
    assert json.loads((state / "sim.json").read_text())["accounts"]["teama1"]["fairshare"] == 6667


def test_dry_run_prints_the_plan_and_changes_nothing(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st"
    argv = [
        "reconcile",
        "--backend",
        "sim",
        "--source",
        str(config_repo),
        "--state",
        str(state),
        "--once",
        "--dry-run",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "dry_run  add_account teama1: account missing" in out
    assert not (state / "sim.json").exists()


def test_bad_arguments_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "reconcile",
                "--backend",
                "sim",
                "--source",
                str(tmp_path / "nope"),
                "--state",
                str(tmp_path / "s"),
                "--once",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a folder, git repository or URL" in err
    assert main(["reconcile", "--backend", "sim", "--interval", "soon", "--once"]) == 2
    assert "--interval" in capsys.readouterr().err
    assert main(["reconcile", "--backend", "sim", "--interval", "0s", "--once"]) == 2
    assert "--interval 0s: expected a positive duration" in capsys.readouterr().err
    assert main(["status", "--reconciler", "--state", str(tmp_path / "none")]) == 2


def test_once_exits_1_when_the_newest_commit_is_rejected_and_status_exits_1_while_stalled(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st"
    base = [
        "reconcile",
        "--backend",
        "sim",
        "--source",
        str(config_repo),
        "--state",
        str(state),
        "--once",
    ]
    assert main(base) == 0
    (config_repo / "inventory/gpu_types.yaml").write_text("gpu_types: {}\n")
    commit_all(config_repo, "break the inventory")
    assert main(base) == 1  # still serving the last good revision, but the newest is rejected
    assert "newest rejected: newest" in capsys.readouterr().out
    assert main(["status", "--reconciler", "--state", str(state)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"Stalled +True  NewestRevisionRejected", out)
    assert re.search(r"Ready +False NewestRevisionRejected", out)


def test_health_file_lines_and_errors() -> None:
    assert parse_health(
        "# comment\nn1 unhealthy ECC errors\nn2 healthy\n\nn3 unhealthy\n", "h.txt"
    ) == {
        "n1": "ECC errors",
        "n3": "unhealthy per health report",
    }
    with pytest.raises(BackendError, match=r"^h.txt:2:3: expected 'NODE healthy\|unhealthy"):
        parse_health("n1 healthy\n  n2 sick\n", "h.txt")
