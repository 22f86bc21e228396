"""Read the configuration of a git revision straight from git objects.

A plan compares two revisions of a pull request that nobody has reviewed yet, so this module
never checks anything out: the work tree, the index and HEAD stay exactly as they were, and the
bytes come from blobs.  The same hostile-input rules as reading a directory apply (a PR can
carry a symlink to ``/etc/passwd``, a submodule, a 2 GB file or a name like ``../../x``): each
one is a positioned :class:`~allotment.errors.Diagnostic`, never a crash and never a read outside
the tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import git

from allotment.config.files import (
    CONFIG_DIRS,
    MAX_FILE_BYTES,
    MAX_FILES,
    SUFFIXES,
    check_file,
)
from allotment.errors import ConfigError, Diagnostic, UsageError

_MODE_SYMLINK = 0o120000
_MODE_GITLINK = 0o160000
_MODE_TREE = 0o040000


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


def read_revision_files(repo: git.Repo, sha: str) -> dict[str, bytes]:
    """Every config file (``*.yaml``/``*.yml`` under the config folders) of commit ``sha``,
    keyed by repo-relative POSIX path, exactly as ``config.files.read_repo_files`` would read
    them from a checkout.

    Raises ConfigError listing every unsafe entry (symlink or submodule anywhere under the config
    folders, oversized or non-UTF-8 file, unsafe name, too many files); nothing is returned
    unless the whole revision is clean.  Oversized blobs are refused by their header size,
    before their bytes are read.

    Trees are decoded here rather than through GitPython's tree objects, which raise on the very
    names (``..``, ``.git``, empty) a hostile commit is made of; we want a Diagnostic instead.
    """
    problems: list[Diagnostic] = []
    out: dict[str, bytes] = {}
    top_entries = {
        name: (mode, binsha) for mode, name, binsha in _entries(repo, repo.commit(sha).tree.binsha)
    }
    for top in CONFIG_DIRS:
        if top not in top_entries:
            continue
        mode, binsha = top_entries[top]
        if mode != _MODE_TREE:
            problems.append(Diagnostic(top, 0, 0, _kind_problem(mode) or "expected a folder"))
            continue
        for path, blob in _walk(repo, binsha, top, problems):
            if len(out) >= MAX_FILES:
                problems.append(Diagnostic(path, 0, 0, f"more than {MAX_FILES} config files"))
                break
            size = repo.odb.info(blob).size
            if size > MAX_FILE_BYTES:
                problems.append(Diagnostic(path, 0, 0, f"file is {size} bytes; the limit is 1 MiB"))
                continue
            data = repo.odb.stream(blob).read()
            problems.extend(check_file(path, data))
            out[path] = data
    if problems:
        raise ConfigError(problems)
    return dict(sorted(out.items()))


def _entries(repo: git.Repo, binsha: bytes) -> Iterator[tuple[int, str, bytes]]:
    """(mode, name, binsha) of a tree object, decoded from its raw bytes.

    Format: ``<octal mode> <name>\0<20-byte id>`` repeated.  Names that are not UTF-8 are
    decoded with surrogate escapes so that the name check refuses them.
    """
    raw = repo.odb.stream(binsha).read()
    i = 0
    while i < len(raw):
        space = raw.index(b" ", i)
        nul = raw.index(b"\0", space)
        mode = int(raw[i:space], 8)
        name = raw[space + 1 : nul].decode("utf-8", "surrogateescape")
        yield mode, name, raw[nul + 1 : nul + 21]
        i = nul + 21


def _kind_problem(mode: int) -> str | None:
    if mode == _MODE_SYMLINK:
        return "symbolic links are not allowed in config"
    if mode == _MODE_GITLINK:
        return "submodules are not allowed in config"
    return None


def _walk(
    repo: git.Repo, tree: bytes, prefix: str, problems: list[Diagnostic]
) -> Iterator[tuple[str, bytes]]:
    """Depth-first in git's order, yielding (path, blob id) of config files and recording every
    symlink or submodule (whatever its name) and every unsafe folder name as a problem.  An
    unsafe folder is not entered."""
    for mode, name, binsha in _entries(repo, tree):
        path = f"{prefix}/{name}"
        kind = _kind_problem(mode)
        if kind:
            problems.append(Diagnostic(path, 0, 0, kind))
        elif mode == _MODE_TREE:
            bad = check_file(path, b"")
            if bad:
                problems.extend(bad)
            else:
                yield from _walk(repo, binsha, path, problems)
        elif path.endswith(SUFFIXES):
            yield path, binsha
