"""The plan the plan benchmarks time: the bundled example committed in a fresh git repository,
and a pull request moving 10 points from science to olmo (``plan_bench.py``, ``plan_profile.py``).
One place, so the timing and the profile are of the very same plan: its repository and its
command line."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.plan.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]


def build(tmp: Path) -> GitRepo:
    """The repository in ``tmp/repo``, on the pull request's branch ``pr``."""
    repo = GitRepo(tmp / "repo")
    for top in ("budgets", "inventory", "policies"):
        shutil.copytree(ROOT / top, repo.path / top)
    repo.commit("bundled example", author="mia.cohen@ai2.example")
    repo.switch("pr", create=True)
    repo.set_share("budgets/ai2/budget.yaml", "olmo", 50)
    repo.set_share("budgets/ai2/budget.yaml", "science", 10)
    repo.commit("Move 10 points from science to olmo", author="arjun.santos@ai2.example")
    return repo


def argv(repo: GitRepo, days: str, seeds: str) -> list[str]:
    """``allot plan``'s arguments for that pull request, pinned to a fixed day."""
    return ["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr", "--days", days,
            "--seeds", seeds, "--at", "2026-11-29"]
