"""`allot plan` end to end on real git repositories (no simulation here; see test_impact)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import jsonschema
import pytest

from allotment.cli.main import main
from tests.conftest import REPO_ROOT, assert_golden
from tests.plan.gitrepo import GitRepo

GOLDEN = Path(__file__).parent / "golden"
SCHEMA = json.loads((REPO_ROOT / "src/allotment/schemas/plan-output.json").read_text())
ML = "budgets/acme/ml/budget.yaml"


def plan(repo: GitRepo, *extra: str, fmt: str = "markdown") -> tuple[int, str]:
    out = repo.path.parent / f"plan.{fmt}"
    out.unlink(missing_ok=True)
    code = main(
        [
            "plan",
            "--repo",
            str(repo.path),
            "--no-simulate",
            "--at",
            "2026-01-02",
            "--format",
            fmt,
            "--out",
            str(out),
            *extra,
        ]
    )
    return code, out.read_text(encoding="utf-8") if out.exists() else ""


def vision_pr(repo: GitRepo, share: float = 70) -> str:
    repo.switch("pr", create=True)
    repo.set_share(ML, "vision", share)
    return repo.commit("Give vision more", author="vera@acme.example")


def test_share_change_comment_matches_golden(small_repo: GitRepo, regen_golden: bool) -> None:
    vision_pr(small_repo)
    code, md = plan(small_repo, "--base", "main", "--head", "pr")
    assert code == 0
    assert_golden(GOLDEN / "share_change.md", md, regen_golden)
    # the claims the golden file stands for
    lines = md.splitlines()
    assert lines[1] == (
        "### Budget plan: gains: vision +5.0 pp (+17% of its budget); "
        "loses: nlp -5.0 pp (-17% of its budget) · needs approval from ml owners"
    )
    certain = md.split("#### Entitlement (certain: from the config)", 1)[1].split("####", 1)[0]
    assert certain.index("| nlp |") < certain.index("| vision |")  # losers first
    assert "Ref. GPU-h/week" in certain and "Delivered" not in certain  # one unit per table
    approvals = md.split("#### Approvals", 1)[1].split("<details>", 1)[0]
    assert "ml-lead" in approvals and "vera" not in approvals  # the author is never offered


def test_plan_file_is_readable_by_the_ci_job_that_posts_it(small_repo: GitRepo) -> None:
    """The comment is posted by another step, often another user: the file keeps the umask."""
    vision_pr(small_repo)
    old = os.umask(0o022)
    try:
        code, _ = plan(small_repo, "--base", "main", "--head", "pr")
    finally:
        os.umask(old)
    assert code == 0
    assert stat.S_IMODE((small_repo.path.parent / "plan.markdown").stat().st_mode) == 0o644


def test_json_output_follows_its_schema_and_matches_markdown_facts(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    assert code == 0
    doc = json.loads(text)
    jsonschema.validate(doc, SCHEMA)
    totals = {t["leaf"]: t for t in doc["totals"]}
    assert totals["vision"]["delta_pp"] == pytest.approx(5.0)
    assert totals["nlp"]["delta_pp"] == pytest.approx(-5.0)
    assert totals["infra"]["delta_pp"] == pytest.approx(0.0)
    assert [a["node"] for a in doc["approvals"]] == ["ml"]
    assert doc["author"] == "vera@acme.example"
    assert doc["base"]["sha"] == small_repo.sha("main")
    assert doc["head"]["sha"] == small_repo.sha("pr")


def test_plan_is_byte_identical_across_runs(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    runs = {plan(small_repo, "--base", "main", "--head", "pr")[1] for _ in range(3)}
    assert len(runs) == 1


def test_base_is_the_merge_base_not_the_tip_of_main(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    small_repo.switch("main")
    small_repo.set_share("budgets/acme/budget.yaml", "infra", 10)  # merged elsewhere meanwhile
    small_repo.commit("Shrink infra", author="ceo@acme.example")
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    doc = json.loads(text)
    assert code == 0
    assert {t["leaf"] for t in doc["totals"] if abs(t["delta_pp"]) > 0.01} == {"vision", "nlp"}
    assert doc["base"]["sha"] == small_repo.sha("main~1")


def test_working_tree_head_is_read_without_touching_index_or_head(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    small_repo.set_share(ML, "nlp", 10)  # uncommitted edit
    before = (
        small_repo.git("status", "--porcelain"),
        small_repo.sha("HEAD"),
        (small_repo.path / ".git/index").read_bytes(),
    )
    code, text = plan(small_repo, "--base", "main", fmt="json")
    assert code == 0
    doc = json.loads(text)
    assert doc["head"]["sha"] is None
    totals = {t["leaf"]: t for t in doc["totals"]}
    assert totals["vision"]["share_after"] == pytest.approx(0.6 * 70 / 80)
    after = (
        small_repo.git("status", "--porcelain"),
        small_repo.sha("HEAD"),
        (small_repo.path / ".git/index").read_bytes(),
    )
    assert before == after


def test_share_floor_breach_exits_1(small_repo: GitRepo) -> None:
    vision_pr(small_repo, share=1000)  # nlp falls to 0.6 * 50/1050 < 5 %
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    assert code == 1
    assert any("nlp on c1" in v and "floor" in v for v in json.loads(text)["violations"])


def test_missing_approval_exits_1_and_given_approval_exits_0(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    code, _ = plan(
        small_repo, "--base", "main", "--head", "pr", "--approved-by", "Vera <vera@acme.example>"
    )
    assert code == 1
    code, text = plan(
        small_repo,
        "--base",
        "main",
        "--head",
        "pr",
        "--approved-by",
        "Mel Lead <ML-Lead@acme.example>",
        fmt="json",
    )
    assert code == 0
    assert json.loads(text)["approvals"][0]["approved_by"] == ["ml-lead@acme.example"]


def test_owner_cannot_approve_own_change(small_repo: GitRepo) -> None:
    small_repo.switch("pr", create=True)
    small_repo.set_share(ML, "vision", 70)
    small_repo.commit("I move my own budget", author="ml-lead@acme.example")
    code, text = plan(
        small_repo,
        "--base",
        "main",
        "--head",
        "pr",
        "--approved-by",
        "ml-lead@acme.example",
        fmt="json",
    )
    assert code == 1
    group = json.loads(text)["approvals"][0]
    assert group["author_is_owner"] is True
    assert group["approved_by"] == []
    assert group["owners"] == ["ml-deputy@acme.example"]  # the author is never offered


def test_invalid_head_exits_2_with_positioned_error(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(
        ML, "owners: [ml-lead@acme.example]\nchildren:\n  vision: {share: -3}\n  nlp: {share: 1}\n"
    )
    small_repo.commit("broken")
    code, out = plan(small_repo, "--base", "main", "--head", "pr")
    assert code == 2
    assert out == ""
    err = capsys.readouterr().err
    assert f"{ML}:" in err
    assert "Traceback" not in err


def test_unknown_revision_is_a_one_line_usage_error(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = plan(small_repo, "--base", "no-such-branch")
    assert code == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_renamed_team_folder_is_one_renamed_node(small_repo: GitRepo) -> None:
    small_repo.switch("pr", create=True)
    small_repo.git("mv", "budgets/acme/ml/vision", "budgets/acme/ml/perception")

    def rename(doc: dict[str, dict[str, object]]) -> None:
        doc["children"]["perception"] = doc["children"].pop("vision")

    small_repo.edit_yaml(ML, rename)
    small_repo.commit("vision is now perception", author="ml-lead@acme.example")
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    assert code == 0
    doc = json.loads(text)
    assert [(c["node"], c["kind"], c["before"]) for c in doc["diff"]["nodes"]] == [
        ("perception", "renamed", "vision")
    ]
    assert all(abs(t["delta_pp"]) < 1e-9 for t in doc["totals"])
    assert doc["headline"] == "No team's share changes."


def test_new_team_needs_parent_owners(small_repo: GitRepo) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(
        "budgets/acme/ml/audio/budget.yaml", "owners: [ava@acme.example]\nmembers: [ava]\n"
    )
    small_repo.edit_yaml(ML, lambda doc: doc["children"].update({"audio": {"share": 20}}))
    small_repo.commit("Add audio", author="ava@acme.example")
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    assert code == 0
    doc = json.loads(text)
    assert ("audio", "added") in {(c["node"], c["kind"]) for c in doc["diff"]["nodes"]}
    assert [a["node"] for a in doc["approvals"]] == ["ml"]


def test_policy_change_needs_platform_team(small_repo: GitRepo) -> None:
    small_repo.switch("pr", create=True)
    small_repo.edit_yaml("policies/scheduler.yaml", lambda doc: doc.update({"lookback": "14d"}))
    small_repo.commit("Longer lookback", author="ivan@acme.example")
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    assert code == 0
    doc = json.loads(text)
    assert [a["node"] for a in doc["approvals"]] == ["(platform team)"]
    assert doc["approvals"][0]["owners"] == ["pat@acme.example"]
    assert [(f["field"], f["before"], f["after"]) for f in doc["diff"]["fields"]] == [
        ("lookback", "(unset)", "14d")
    ]
    assert doc["verdict"].startswith("lookback (scheduler) (unset) → 14d")
    assert doc["verdict"].endswith("needs approval from the platform team")


def test_git_state_of_repository_is_untouched(small_repo: GitRepo) -> None:
    vision_pr(small_repo)
    refs = subprocess.run(
        ["git", "for-each-ref"], cwd=small_repo.path, capture_output=True, text=True
    ).stdout
    plan(small_repo, "--base", "main", "--head", "pr")
    assert (
        subprocess.run(
            ["git", "for-each-ref"], cwd=small_repo.path, capture_output=True, text=True
        ).stdout
        == refs
    )
    assert small_repo.git("status", "--porcelain") == ""


def test_invalid_head_with_invalid_comment_writes_the_errors_as_the_comment(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.write(ML, "owners: [ml-lead@acme.example]\nchildren:\n  vision: {share: -3}\n  nlp: {share: 1}\n")
    small_repo.commit("broken")
    capsys.readouterr()
    code, out = plan(small_repo, "--base", "main", "--head", "pr", "--invalid-comment",
                     "--github-annotations")
    assert code == 2
    assert out.startswith("<!-- allotment-plan format=2 invalid head=pr -->\n")
    assert f"- `{ML}:3:19: children.vision.share: must be > 0, got -3`" in out  # shown as written: no entity in a code span
    stdout = capsys.readouterr().out
    assert stdout == f"::error file={ML},line=3,col=19::children.vision.share: must be > 0, got -3\n"


def test_annotations_cannot_inject_a_second_workflow_command() -> None:
    from allotment.errors import Diagnostic
    from allotment.plan.failure import workflow_commands

    text = workflow_commands([Diagnostic("a,b:c.yaml", 1, 2, "bad\n::warning::x 100%")])
    assert text == "::error file=a%2Cb%3Ac.yaml,line=1,col=2::bad%0A::warning::x 100%25\n"
