"""Read the configuration of a git revision straight from git objects.

A plan compares two revisions of a pull request that nobody has reviewed yet, so this module
never checks anything out: the work tree, the index and HEAD stay exactly as they were, and the
bytes come from blobs, read by the one git reader the reconciler uses too
(``config.gitrevision.read_revision_files``, re-exported here), with the same hostile-input
rules as reading a directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

from allotment.config.gitrevision import read_revision_files
from allotment.errors import UsageError

__all__ = ["Revision", "merge_base", "open_repo", "read_revision_files", "resolve"]


@dataclass(frozen=True, slots=True)
class Revision:
    """A resolved commit: what a plan names in its marker and its headline."""

    sha: str
    author_email: str
    author_name: str
    committed_unix: int


def open_repo(root: Path) -> git.Repo:
    """Open the repository at ``root`` (or one of its parents), or raise a one-line UsageError."""
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise UsageError(f"{root} is not inside a git repository") from exc


def resolve(repo: git.Repo, rev: str) -> Revision:
    """Resolve ``rev`` (branch, tag, sha, ``origin/main``...) to a commit."""
    if rev.startswith("-") or "\n" in rev:
        raise UsageError(f"not a revision: {rev!r}")
    try:
        commit = repo.commit(rev)
    except (git.BadName, ValueError, git.GitCommandError) as exc:
        raise UsageError(f"unknown revision {rev!r}") from exc
    return Revision(
        sha=commit.hexsha,
        author_email=str(commit.author.email or ""),
        author_name=str(commit.author.name or ""),
        committed_unix=int(commit.committed_date),
    )


def merge_base(repo: git.Repo, base: str, head: str) -> Revision:
    """The commit a pull request from ``head`` into ``base`` really starts from.

    Comparing with the tip of ``base`` would show changes merged into ``base`` since the branch
    was cut as if the PR made them; the merge-base shows only what the PR changes.
    """
    bases = repo.merge_base(resolve(repo, base).sha, resolve(repo, head).sha)
    if not bases:
        raise UsageError(f"{base} and {head} have no common ancestor")
    return resolve(repo, bases[0].hexsha)
