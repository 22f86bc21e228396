"""CODEOWNERS generated from the budget tree, and `--check` in CI."""

from __future__ import annotations

import pytest

from allotment.cli.main import main
from tests.conftest import REPO_ROOT
from tests.plan.gitrepo import GitRepo


def test_each_node_folder_is_owned_by_its_owners_parents_first(small_repo: GitRepo) -> None:
    assert main(["codeowners", "--repo", str(small_repo.path)]) == 0
    lines = [
        ln
        for ln in (small_repo.path / ".github/CODEOWNERS").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert "/budgets/acme/ml/ ml-deputy@acme.example ml-lead@acme.example" in lines
    assert "/budgets/acme/ml/vision/ vera@acme.example" in lines
    assert "/policies/ pat@acme.example" in lines
    # last match wins on GitHub: a parent's folder line must come before its children's
    assert lines.index(
        "/budgets/acme/ml/ ml-deputy@acme.example ml-lead@acme.example"
    ) < lines.index("/budgets/acme/ml/vision/ vera@acme.example")
    assert lines[-1] == "/.github/CODEOWNERS pat@acme.example"


def test_check_fails_when_stale_and_passes_when_fresh(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = str(small_repo.path)
    assert main(["codeowners", "--repo", repo, "--check"]) == 1
    assert main(["codeowners", "--repo", repo]) == 0
    assert main(["codeowners", "--repo", repo, "--check"]) == 0
    small_repo.edit_yaml(
        "budgets/acme/ml/nlp/budget.yaml", lambda d: d["owners"].append("nora@acme.example")
    )
    assert main(["codeowners", "--repo", repo, "--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_committed_codeowners_of_this_repository_is_up_to_date() -> None:
    assert main(["codeowners", "--repo", str(REPO_ROOT), "--check"]) == 0
