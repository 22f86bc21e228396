"""`.pre-commit-hooks.yaml`: each hook's entry, run as pre-commit runs it in a config repo."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT
from tests.plan.actionrunner import allot_on_path
from tests.plan.gitrepo import GitRepo

HOOKS = {h["id"]: h for h in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}


def run_hook(repo: GitRepo, hook: str, bin_dir: Path) -> int:
    entry = HOOKS[hook]
    assert entry["pass_filenames"] is False and entry["language"] == "python"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(repo.home)}
    return subprocess.run(shlex.split(entry["entry"]), cwd=repo.path, env=env, capture_output=True).returncode


def test_hooks_pass_on_a_good_config_and_fail_on_a_bad_one(small_repo: GitRepo, tmp_path: Path) -> None:
    bin_dir = allot_on_path(tmp_path / "bin")
    assert set(HOOKS) == {"allot-validate", "allot-codeowners"}
    for hook in HOOKS.values():
        assert re.search(hook["files"], "budgets/acme/ml/budget.yaml")
    subprocess.run([str(bin_dir / "allot"), "codeowners"], cwd=small_repo.path, check=True)
    assert run_hook(small_repo, "allot-validate", bin_dir) == 0
    assert run_hook(small_repo, "allot-codeowners", bin_dir) == 0
    small_repo.edit_yaml("budgets/acme/ml/budget.yaml", lambda d: d["owners"].append("new@acme.example"))
    assert run_hook(small_repo, "allot-codeowners", bin_dir) == 1  # CODEOWNERS is stale
    small_repo.write("budgets/acme/ml/budget.yaml", "owners: [x@acme.example]\nchildren: {vision: {share: -1}}\n")
    assert run_hook(small_repo, "allot-validate", bin_dir) == 2
