"""A hostile pull request gets a clean error or an escaped comment, never execution.

Each case is a real commit on a PR branch, planned through the CLI as the workflow does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.plan.gitrepo import GitRepo

ML = "budgets/acme/ml/budget.yaml"


def run_plan(repo: GitRepo, out: Path) -> int:
    return main(
        [
            "plan",
            "--repo",
            str(repo.path),
            "--base",
            "main",
            "--head",
            "pr",
            "--no-simulate",
            "--at",
            "2026-01-02",
            "--out",
            str(out),
        ]
    )


def test_yaml_python_tag_is_an_error_not_a_call(
    small_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    canary = tmp_path / "pwned"
    small_repo.switch("pr", create=True)
    small_repo.write(
        ML, f"owners: !!python/object/apply:os.system ['touch {canary}']\nchildren: {{}}\n"
    )
    small_repo.commit("tag")
    assert run_plan(small_repo, tmp_path / "plan.md") == 2
    err = capsys.readouterr().err
    assert ML in err and "Traceback" not in err
    assert not canary.exists()
    assert not (tmp_path / "plan.md").exists()


def test_jinja_in_a_team_name_is_refused_by_validation(
    small_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.edit_yaml(ML, lambda d: d["children"].update({"{{ 7*7 }}": {"share": 1}}))
    small_repo.commit("jinja name")
    assert run_plan(small_repo, tmp_path / "plan.md") == 2
    err = capsys.readouterr().err
    assert "{{ 7*7 }}" in err or ML in err
    assert "49" not in err


def test_jinja_and_html_in_free_text_is_escaped_in_the_comment(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    """Free text that reaches the comment (a boost reason, shown in the policy diff)."""
    small_repo.switch("pr", create=True)
    small_repo.write(
        "policies/boosts.yaml",
        "boosts:\n  - target: account:nlp\n    amount: 1.0\n    expires: 2026-01-05T00:00:00Z\n"
        '    reason: "{{ 7*7 }} {% raw %} <img src=x onerror=alert(1)> | @acme/everyone [x](javascript:alert(1))"\n'
        "    approver: pat@acme.example\n",
    )
    small_repo.commit("boost")
    out = tmp_path / "plan.md"
    assert run_plan(small_repo, out) == 0
    md = out.read_text()
    assert "49" not in md.split("-->", 1)[1]
    assert r"\{\{ 7\*7 \}\}" in md
    assert "<img" not in md and "&lt;img" in md
    assert "@acme/everyone" not in md
    assert "[x](javascript" not in md


def test_path_traversal_and_huge_file_are_clean_errors(
    small_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write("budgets/acme/big.yaml", "# " + "x" * (2 * 1024 * 1024) + "\n")
    small_repo.write("budgets/acme/we ird.yaml", "a: 1\n")
    small_repo.commit("big")
    assert run_plan(small_repo, tmp_path / "plan.md") == 2
    err = capsys.readouterr().err
    assert "budgets/acme/big.yaml:0:0: file is" in err
    assert "budgets/acme/we ird.yaml:0:0: unsafe path component" in err
    assert "Traceback" not in err
