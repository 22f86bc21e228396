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
    assert WORKFLOWS, "no workflow files"
    result = actionlint(*WORKFLOWS)
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
    for wf in WORKFLOWS:
        perms = load(wf).get("permissions")
        assert perms in ({}, {"contents": "read"}), f"{wf.name}: top-level permissions {perms}"


def test_only_the_comment_job_can_write_and_it_runs_no_pr_code() -> None:
    writers = []
    for wf in WORKFLOWS:
        doc = load(wf)
        triggers = doc.get(True, doc.get("on"))  # PyYAML reads the key `on` as True
        assert "pull_request_target" not in (triggers or {}), wf.name
        for name, job in doc["jobs"].items():
            perms = job.get("permissions", {})
            if any(v == "write" for v in perms.values()):
                writers.append((wf.name, name))
                assert perms == {"actions": "read", "pull-requests": "write"}
                steps = job["steps"]
                assert not any(str(s.get("uses", "")).startswith("actions/checkout") for s in steps)
                assert not any("run" in s for s in steps), "the writing job runs no shell"
                assert set(triggers) == {"workflow_run"}
    assert writers == [("budget-plan-comment.yml", "comment")]


def test_plan_workflow_installs_the_tool_from_the_target_branch() -> None:
    steps = load(REPO_ROOT / ".github/workflows/budget-plan.yml")["jobs"]["plan"]["steps"]
    tool = next(s for s in steps if s.get("with", {}).get("path") == "tool")
    assert tool["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["working-directory"] == "tool"
    assert all(
        s.get("with", {}).get("persist-credentials") is False
        for s in steps
        if str(s.get("uses", "")).startswith("actions/checkout")
    )
