"""Issue 32, item 2: a pull request cannot write GitHub workflow commands into the plan job's log.

A folder name, a YAML key or a value holding a line break and ``::warning ...::`` or
``::add-mask::`` was printed raw by ``allot validate`` and ``allot plan``: a forged annotation
or masked log text.  One test per channel and command; the check reads the output as the runner
and Python split lines.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.conftest import REPO_ROOT
from tests.plan.gitrepo import GitRepo
from tests.test_neutral import starts_a_command

ML = "budgets/acme/ml/budget.yaml"
FORGED = "::warning file=budget.yaml,line=1::forged"
SMALL = REPO_ROOT / "tests/plan/data/small"
KEY_FILE = (
    "owners: [ml-lead@acme.example]\n"
    "children:\n"
    '  vision: {share: 50, "bogus\\n::add-mask::acme": 1}\n'
    "  nlp: {share: 50}\n"
)
VALUE_FILE = (
    "owners: [ml-lead@acme.example]\n"
    "children:\n"
    '  vision: {share: 50, description: "images\\L::warning::forged\\N::add-mask::x"}\n'
    "  nlp: {share: 50}\n"
)


def _validate(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate", "--repo", str(root), "--at", "2026-01-02"])
    out = capsys.readouterr()
    return code, out.out + out.err


def _plan(repo: GitRepo, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr",
                 "--no-simulate", "--at", "2026-01-02", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "cfg"
    shutil.copytree(SMALL, root)
    return root


def test_validate_prints_a_folder_name_with_a_workflow_command_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    (root / "budgets/acme" / f"x\n{FORGED}").mkdir()
    (root / "budgets/acme" / f"x\n{FORGED}" / "budget.yaml").write_text("owners: []\n")
    code, out = _validate(root, capsys)
    assert code == 2 and "forged" in out
    assert not starts_a_command(out)


def test_validate_prints_a_yaml_key_with_a_workflow_command_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    (root / ML).write_text(KEY_FILE, encoding="utf-8")
    code, out = _validate(root, capsys)
    assert code == 2 and "add-mask" in out
    assert not starts_a_command(out)


def test_validate_prints_a_yaml_value_with_a_workflow_command_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    (root / ML).write_text(VALUE_FILE.replace("description", "start"), encoding="utf-8")
    code, out = _validate(root, capsys)
    assert code == 2 and "forged" in out
    assert not starts_a_command(out)


def test_plan_prints_a_folder_name_with_a_workflow_command_inert(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(f"budgets/acme/x\n{FORGED}/budget.yaml", "owners: []\n")
    small_repo.commit("a folder name that writes a command")
    code, out = _plan(small_repo, capsys)
    assert code == 2 and "forged" in out
    assert not starts_a_command(out)


def test_plan_prints_a_yaml_key_with_a_workflow_command_inert(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(ML, KEY_FILE)
    small_repo.commit("a key that writes a command")
    code, out = _plan(small_repo, capsys, "--github-annotations")
    assert code == 2 and "add-mask" in out
    assert not starts_a_command(out.replace("::error file=", "", 1))  # its own one annotation


def test_plan_prints_a_yaml_value_with_a_workflow_command_inert(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(ML, VALUE_FILE)
    small_repo.commit("a description that writes a command")
    for fmt in ("markdown", "json"):
        code, out = _plan(small_repo, capsys, "--format", fmt)
        assert code == 0 and "forged" in out, fmt
        assert not starts_a_command(out), fmt
