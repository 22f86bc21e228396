"""An error about the plan's own history points at the ``plan_workload`` that names it, as
``file:line:col`` like every bad-input message, in the base revision the setting is read from:
the file's setting, or the cluster's own when it has one (stop 40 noticed the bare
``policies/scheduler.yaml:``)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from allotment.errors import TraceError
from allotment.plan.workload_setting import where
from tests.plan.test_flags_and_demand import _history_plan


def _position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the value written after ``needle``."""
    for n, line in enumerate(text.splitlines(), 1):
        i = line.find(needle)
        if i >= 0:
            return n, i + len(needle) + 1
    raise AssertionError(f"{needle!r} not in the file")


def test_a_missing_history_is_named_at_the_line_and_column_of_its_setting(small_repo: Any) -> None:
    small_repo.edit_yaml("policies/scheduler.yaml", lambda d: d.update({"plan_workload": "history/gone.jsonl"}))
    small_repo.commit("replay a history nobody committed", author="pat@acme.example")
    small_repo.switch("pr", create=True)
    small_repo.set_share("budgets/acme/ml/budget.yaml", "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    text = (small_repo.path / "policies" / "scheduler.yaml").read_text()
    line, col = _position(text, "plan_workload: ")
    with pytest.raises(TraceError) as err:
        _history_plan(small_repo, "pr")
    assert str(err.value).startswith(
        f"policies/scheduler.yaml:{line}:{col}: plan_workload 'history/gone.jsonl' is not a file of the base revision")

    # the same one line from the command, exit 2, no traceback
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from allotment.cli.main import main; sys.exit(main())", "plan",
         "--repo", str(small_repo.path), "--base", "main", "--head", "pr", "--days", "0.25", "--seeds", "1",
         "--at", "2026-01-02"],
        capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"policies/scheduler.yaml:{line}:{col}: plan_workload 'history/gone.jsonl'" in done.stderr


def test_a_clusters_own_setting_is_the_one_named(small_repo: Any) -> None:
    def both(d: Any) -> None:
        d["plan_workload"] = "history/all.jsonl"
        d.setdefault("clusters", {}).setdefault("c1", {})["plan_workload"] = "history/c1.jsonl"

    small_repo.edit_yaml("policies/scheduler.yaml", both)
    sha = small_repo.commit("a history per cluster", author="pat@acme.example")
    text = (small_repo.path / "policies" / "scheduler.yaml").read_text()
    line, col = _position(text, "plan_workload: history/c1")
    col -= len("history/c1")
    assert where(small_repo.path, sha, "c1") == f"policies/scheduler.yaml:{line}:{col}"
    top_line, top_col = _position(text, "plan_workload: history/all")
    assert where(small_repo.path, sha, "other") == f"policies/scheduler.yaml:{top_line}:{top_col - len('history/all')}"
