"""The one reader of a config revision from git objects, used by ``allot plan`` and by the
reconciler alike, so a commit the plan check accepted is the commit the reconciler applies.

A commit nobody has reviewed yet is hostile input: it can carry a symlink to ``/etc/passwd``, a
submodule, a 2 GB file, one 1 MiB blob under 300 names (357 MB read for a 1 MiB commit), 1,100
nested folders (a recursive walk dies with ``RecursionError``), or a tree entry whose own name
holds a ``/`` (``olmo/budget.yaml``: ``git`` itself never writes one, ``git mktree`` does).
Each is a positioned :class:`~allotment.errors.Diagnostic`, all of them at once; nothing is
returned unless the whole revision is clean.  The limits are ``config.files``'s, the ones
``allot validate`` applies to a checkout, so the three commands refuse the same commits.

Trees are decoded here from their raw bytes rather than through GitPython's tree objects, which
raise on the very names (``..``, ``.git``, empty) a hostile commit is made of, and the walk is
an explicit stack (no recursion), stopped at ``MAX_DEPTH`` before it goes any deeper.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import git

from allotment.config.files import (
    CONFIG_DIRS,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SUFFIXES,
    check_file,
)
from allotment.errors import ConfigError, Diagnostic

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: int
    name: str
    binsha: bytes


def read_revision_files(repo: git.Repo, sha: str) -> dict[str, bytes]:
    """Every config file (``*.yaml``/``*.yml`` under the config folders) of commit ``sha``,
    keyed by repo-relative POSIX path, exactly as ``config.files.read_repo_files`` reads them
    from a checkout.  Oversized blobs (one or in total) are refused by their header size, before
    their bytes are read.  Raises ConfigError listing every problem."""
    problems: list[Diagnostic] = []
    out: dict[str, bytes] = {}
    total = 0
    top_entries = {e.name: e for e in tree_entries(repo, repo.commit(sha).tree.binsha)}
    for top in CONFIG_DIRS:
        entry = top_entries.get(top)
        if entry is None:
            continue
        if entry.mode != MODE_TREE:
            problems.append(Diagnostic(top, 0, 0, _kind_problem(entry.mode) or "expected a folder"))
            continue
        for path, blob in _walk(repo, entry.binsha, top, problems):
            if len(out) >= MAX_FILES:
                problems.append(Diagnostic(path, 0, 0, f"more than {MAX_FILES} config files"))
                break
            size = repo.odb.info(blob).size
            if size > MAX_FILE_BYTES:
                problems.append(Diagnostic(path, 0, 0, f"file is {size} bytes; the limit is 1 MiB"))
                continue
            total += size
            if total > MAX_TOTAL_BYTES:
                problems.append(
                    Diagnostic(
                        path, 0, 0, f"config files exceed {MAX_TOTAL_BYTES >> 20} MiB in total"
                    )
                )
                break
            data = repo.odb.stream(blob).read()
            problems.extend(check_file(path, data))
            out[path] = data
    if problems:
        raise ConfigError(problems)
    return dict(sorted(out.items()))


def tree_entries(repo: git.Repo, binsha: bytes) -> Iterator[TreeEntry]:
    """The entries of a tree object, decoded from its raw bytes.

    Format: ``<octal mode> <name>\\0<20-byte id>`` repeated.  Names that are not UTF-8 are
    decoded with surrogate escapes so that the name check refuses them."""
    raw = repo.odb.stream(binsha).read()
    i = 0
    while i < len(raw):
        space = raw.index(b" ", i)
        nul = raw.index(b"\0", space)
        mode = int(raw[i:space], 8)
        name = raw[space + 1 : nul].decode("utf-8", "surrogateescape")
        yield TreeEntry(mode, name, raw[nul + 1 : nul + 21])
        i = nul + 21


def _kind_problem(mode: int) -> str | None:
    if mode == MODE_SYMLINK:
        return "symbolic links are not allowed in config"
    if mode == MODE_GITLINK:
        return "submodules are not allowed in config"
    return None


def _walk(
    repo: git.Repo, tree: bytes, prefix: str, problems: list[Diagnostic]
) -> Iterator[tuple[str, bytes]]:
    """Depth-first in git's order, yielding (path, blob id) of config files and recording every
    symlink or submodule (whatever its name), every name holding a ``/`` and every unsafe or
    too-deep folder as a problem.  A refused folder is not entered."""
    stack: list[tuple[bytes, str]] = [(tree, prefix)]
    while stack:
        binsha, folder = stack.pop()
        subdirs: list[tuple[bytes, str]] = []
        for e in tree_entries(repo, binsha):
            path = f"{folder}/{e.name}"
            kind = _kind_problem(e.mode)
            if "/" in e.name or "\0" in e.name:
                problems.append(Diagnostic(path, 0, 0, f"tree entry name {e.name!r} holds a '/'"))
            elif kind:
                problems.append(Diagnostic(path, 0, 0, kind))
            elif e.mode == MODE_TREE:
                bad = check_file(path, b"")
                if bad:
                    problems.extend(bad)
                else:
                    subdirs.append((e.binsha, path))
            elif path.endswith(SUFFIXES):
                yield path, e.binsha
        stack.extend(reversed(subdirs))
    return


__all__ = ["MAX_DEPTH", "TreeEntry", "read_revision_files", "tree_entries"]
