from __future__ import annotations

from pathlib import Path

import pytest

from tests.plan.gitrepo import GitRepo


@pytest.fixture
def small_repo(tmp_path: Path) -> GitRepo:
    """The small test config committed on main by its platform team."""
    repo = GitRepo.from_data(tmp_path / "repo")
    repo.commit("Initial budget tree", author="pat@acme.example")
    return repo
