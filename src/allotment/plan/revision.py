"""Load and compile the configuration of one revision (a commit, or the working tree).

Commits are read from git objects (``gitread``), the working tree from disk
(``config.files``); both then go through the very same loader and compiler as
``allot validate``, so a plan reports exactly the errors validate would.  Compiled commits are
memoised by the ids of their config trees: history and audit walk hundreds of commits of
which most do not touch the config.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path

import git

from allotment.compile.compiler import compile_config
from allotment.compile.model import CompiledConfig
from allotment.config.files import CONFIG_DIRS, read_repo_files
from allotment.config.loader import load_config
from allotment.plan.gitread import read_revision_files


def compile_files(files: Mapping[str, bytes], at: dt.date, revision: str | None) -> CompiledConfig:
    """Validate and compile; raises ConfigError / CompileError with every diagnostic."""
    return compile_config(load_config(files, at), at, revision)


def compile_worktree(root: Path, at: dt.date) -> CompiledConfig:
    return compile_files(read_repo_files(root), at, None)


def config_key(repo: git.Repo, sha: str) -> str:
    """Ids of the config folders' trees at ``sha``: equal keys mean identical config bytes."""
    tree = repo.commit(sha).tree
    parts = []
    for top in CONFIG_DIRS:
        try:
            parts.append(f"{top}={(tree / top).hexsha}")
        except KeyError:
            parts.append(f"{top}=-")
    return ";".join(parts)


def has_config(repo: git.Repo, sha: str) -> bool:
    tree = repo.commit(sha).tree
    try:
        _ = tree / "budgets"  # raises KeyError when absent
    except KeyError:
        return False
    return True


class CommitCompiler:
    """Compile commits, memoising by (config trees, date) within one command."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self._memo: dict[tuple[str, dt.date], CompiledConfig] = {}
        self._files: dict[str, Mapping[str, bytes]] = {}

    def files(self, sha: str) -> Mapping[str, bytes]:
        """The config files of ``sha`` (the last few commits' are kept: audit asks each twice)."""
        key = config_key(self.repo, sha)
        if key not in self._files:
            if len(self._files) > 4:
                self._files.pop(next(iter(self._files)))
            self._files[key] = read_revision_files(self.repo, sha)
        return self._files[key]

    def compile(self, sha: str, at: dt.date) -> CompiledConfig:
        key = (config_key(self.repo, sha), at)
        if key not in self._memo:
            self._memo[key] = compile_files(self.files(sha), at, sha)
        return self._memo[key]
