"""The GitHub workflows: actionlint-clean, and least privilege by construction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github/workflows").glob("*.yml"))
EXAMPLES = sorted((REPO_ROOT / ".github/config-repo-example").glob("*.yml"))
ACTIONS = REPO_ROOT / ".github/actions"
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def load(path: Path) -> dict[Any, Any]:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict)
    return doc


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", *map(str, files)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )


@pytest.mark.skipif(not ACTIONLINT.exists(), reason="actionlint not installed in this venv")
def test_workflows_pass_actionlint() -> None:
    assert WORKFLOWS and EXAMPLES, "no workflow files"
    result = actionlint(*WORKFLOWS, *EXAMPLES)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not ACTIONLINT.exists(), reason="actionlint not installed in this venv")
def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    bad = tmp_path / ".github/workflows/bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.nope.title }}\n      - uses: actions/checkout\n"
    )
    assert actionlint(bad).returncode != 0


def test_every_workflow_starts_with_no_or_read_permissions() -> None:
    for wf in WORKFLOWS + EXAMPLES:
        perms = load(wf).get("permissions")
        assert perms in ({}, {"contents": "read"}), f"{wf.name}: top-level permissions {perms}"


def _steps_of(step: dict[str, Any]) -> list[dict[str, Any]]:
    """A step, or the steps of the composite action it uses (ours, local or by name)."""
    uses = str(step.get("uses", ""))
    for prefix in ("./.github/actions/", "your-org/allotment/.github/actions/"):
        if uses.startswith(prefix):
            name = uses.removeprefix(prefix).split("@", 1)[0]
            action = load(ACTIONS / name / "action.yml")
            assert action["runs"]["using"] == "composite"
            return [s for sub in action["runs"]["steps"] for s in _steps_of(sub)]
    return [step]


def test_only_the_comment_job_can_write_and_it_runs_no_pr_code() -> None:
    writers = []
    for wf in WORKFLOWS + EXAMPLES:
        doc = load(wf)
        triggers = doc.get(True, doc.get("on"))  # PyYAML reads the key `on` as True
        assert "pull_request_target" not in (triggers or {}), wf.name
        for name, job in doc["jobs"].items():
            perms = job.get("permissions", {})
            if any(v == "write" for v in perms.values()):
                writers.append((wf.parent.name, wf.name, name))
                if wf.name == "release.yml":  # a pushed tag only, never a pull request
                    assert set(triggers) == {"push"} and set(triggers["push"]) == {"tags"}
                    assert perms == {"contents": "write"}
                    continue
                assert perms == {"actions": "read", "pull-requests": "write"}
                steps = [s for step in job["steps"] for s in _steps_of(step)]
                for s in steps:
                    if str(s.get("uses", "")).startswith("actions/checkout"):
                        # only the default branch's own actions, never a PR ref
                        assert s["with"]["ref"] == "${{ github.event.repository.default_branch }}"
                        assert s["with"]["persist-credentials"] is False
                assert not any("run" in s for s in steps), "the writing job runs no shell"
                assert set(triggers) == {"workflow_run"}
    assert sorted(writers) == [
        ("config-repo-example", "budget-plan-comment.yml", "comment"),
        ("workflows", "budget-plan-comment.yml", "comment"),
        ("workflows", "release.yml", "release"),
    ]


def test_plan_workflow_installs_the_tool_and_its_action_from_the_target_branch() -> None:
    steps = load(REPO_ROOT / ".github/workflows/budget-plan.yml")["jobs"]["plan"]["steps"]
    tool = next(s for s in steps if s.get("with", {}).get("path") == "tool")
    assert tool["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    plan = next(s for s in steps if "actions/plan" in str(s.get("uses", "")))
    assert plan["uses"] == "./tool/.github/actions/plan"  # the action too comes from the base
    assert plan["with"]["allot-package"] == "${{ github.workspace }}/tool"
    assert all(
        s.get("with", {}).get("persist-credentials") is False
        for s in steps
        if str(s.get("uses", "")).startswith("actions/checkout")
    )


def test_the_config_repo_example_pins_allotment() -> None:
    doc = load(REPO_ROOT / ".github/config-repo-example/budget-plan.yml")
    (plan,) = [s for s in doc["jobs"]["plan"]["steps"] if "actions/plan" in str(s.get("uses", ""))]
    # the tool repository at the action's own tag: installs before anything is on an index
    tag = plan["uses"].rsplit("@", 1)[1]
    assert plan["with"]["allot-package"] == f"git+https://github.com/your-org/allotment@{tag}"
    assert doc["jobs"]["plan"]["permissions"] == {"contents": "read"}
