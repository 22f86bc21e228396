"""`allot audit` and `allot history` on real histories: merges, squashes, renames."""

from __future__ import annotations

import json

import pytest

from allotment.cli.main import main
from tests.plan.gitrepo import GitRepo

ML = "budgets/acme/ml/budget.yaml"


def audit_json(repo: GitRepo, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    code = main(["audit", "--repo", str(repo.path), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def merged_pr(
    repo: GitRepo, name: str, share: float, author: str, trailer: str | None, squash: bool = False
) -> str:
    repo.switch(name, create=True)
    repo.set_share(ML, "vision", share)
    repo.commit(f"vision to {share}", author=author)
    repo.switch("main")
    message = f"Merge {name}\n\nBudget change.\n\n" + (
        f"Approved-by: {trailer}\n" if trailer else ""
    )
    if squash:
        return repo.squash(name, message, author=author)
    return repo.merge(name, message)


def test_approved_merge_passes(small_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    merged_pr(small_repo, "pr1", 70, "vera@acme.example", "Mel <ml-lead@acme.example>")
    code, doc = audit_json(small_repo, capsys)
    assert code == 0
    assert [c["bootstrap"] for c in doc["commits"]] == [True, False]
    assert doc["commits"][1]["required"][0]["approved_by"] == ["ml-lead@acme.example"]


def test_unapproved_and_self_approved_changes_fail(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    bad1 = merged_pr(small_repo, "pr1", 70, "vera@acme.example", None)
    bad2 = merged_pr(
        small_repo, "pr2", 80, "ml-lead@acme.example", "ml-lead@acme.example", squash=True
    )
    ok = merged_pr(
        small_repo, "pr3", 90, "vera@acme.example", "D <ml-deputy@acme.example>", squash=True
    )
    code, doc = audit_json(small_repo, capsys)
    assert code == 1
    verdict = {c["sha"]: c["ok"] for c in doc["commits"]}
    assert verdict == {small_repo.sha("main~3"): True, bad1: False, bad2: False, ok: True}


def test_merge_commit_authors_include_the_branch_authors(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    # ml-lead wrote the change on the branch; a bot merged it with ml-lead's own "approval"
    merged_pr(small_repo, "pr1", 70, "ml-lead@acme.example", "ml-lead@acme.example")
    code, doc = audit_json(small_repo, capsys)
    assert code == 1
    assert "ml-lead@acme.example" in doc["commits"][-1]["authors"]


def test_since_limits_the_walk(small_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    merged_pr(small_repo, "pr1", 70, "vera@acme.example", None)
    mark = small_repo.sha("main")
    merged_pr(small_repo, "pr2", 80, "vera@acme.example", "ml-deputy@acme.example")
    code, doc = audit_json(small_repo, capsys, "--since", mark)
    assert code == 0
    assert len(doc["commits"]) == 1


def test_text_report_lists_violations(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    merged_pr(small_repo, "pr1", 70, "vera@acme.example", None)
    capsys.readouterr()
    assert main(["audit", "--repo", str(small_repo.path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "ml: no approval" in out


def test_history_follows_shares_owners_and_renames(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    merged_pr(small_repo, "pr1", 70, "vera@acme.example", "ml-lead@acme.example")
    small_repo.git("mv", "budgets/acme/ml/vision", "budgets/acme/ml/perception")
    small_repo.edit_yaml(
        ML, lambda d: d["children"].insert(0, "perception", d["children"].pop("vision"))
    )
    small_repo.commit("rename vision", author="ml-lead@acme.example")
    small_repo.edit_yaml(
        "budgets/acme/ml/perception/budget.yaml", lambda d: d["owners"].append("pia@acme.example")
    )
    small_repo.commit("pia co-owns perception", author="vera@acme.example")
    capsys.readouterr()
    assert main(["history", "perception", "--repo", str(small_repo.path), "--format", "json"]) == 0
    events = [(e["name"], e["change"]) for e in json.loads(capsys.readouterr().out)["events"]]
    assert events == [
        ("vision", "added"),
        ("vision", "share"),
        ("perception", "renamed"),
        ("perception", "owners"),
    ]
    assert main(["history", "perception", "--repo", str(small_repo.path)]) == 0
    text = capsys.readouterr().out
    assert "50 (50.0% of ml) -> 70 (58.3% of ml)" in text
    assert "approved by ml-lead@acme.example" in text


def test_history_of_unknown_node_is_usage_error(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "nobody", "--repo", str(small_repo.path)]) == 2
    assert "no node named 'nobody'" in capsys.readouterr().err


def test_commit_with_invalid_config_is_a_violation(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.write(ML, "owners: [ml-lead@acme.example]\nchildren: {vision: {share: -1}}\n")
    broken = small_repo.commit("oops", author="vera@acme.example")
    code, doc = audit_json(small_repo, capsys)
    assert code == 1
    entry = next(c for c in doc["commits"] if c["sha"] == broken)
    assert entry["violations"][0].startswith("invalid config: budgets/acme/ml/budget.yaml:")
