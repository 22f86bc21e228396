"""Read the config files of a repository from disk, refusing what a hostile pull request could use.

Refused (as Diagnostics, all at once): symlinks anywhere under the config folders (they could point
outside the repo or loop), files over ``MAX_FILE_BYTES``, non-UTF-8 files, names that are not plain
``[A-Za-z0-9._-]``, paths deeper than ``MAX_DEPTH`` folders, more than ``MAX_FILES`` files or
``MAX_TOTAL_BYTES`` in all.  ``allot plan`` reads the same keys from git
objects instead and applies the same checks through ``check_file``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from allotment.errors import ConfigError, Diagnostic

CONFIG_DIRS = ("budgets", "inventory", "policies")
SUFFIXES = (".yaml", ".yml")
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 100_000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64  # path components below the repo root; a budget tree is a handful deep
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")


_safe_seen: set[str] = set()


def _safe(part: str) -> bool:
    """Whether a path component is plain; remembers good ones (a tree repeats them a lot)."""
    if _SAFE_PART.match(part) is None:
        return False
    if len(_safe_seen) < 100_000:
        _safe_seen.add(part)
    return True


def is_config_path(rel: str) -> bool:
    """True for a repo-relative POSIX path that the loader should read."""
    return rel.split("/", 1)[0] in CONFIG_DIRS and rel.endswith(SUFFIXES)


def check_file(rel: str, data: bytes) -> list[Diagnostic]:
    """Checks on one file's name and bytes that do not need YAML."""
    out = []
    parts = rel.split("/")
    if len(parts) > MAX_DEPTH:
        return [Diagnostic(rel, 0, 0, f"nested deeper than {MAX_DEPTH} folders")]
    bad = [p for p in parts if p not in _safe_seen and not _safe(p)]
    if bad:
        out.append(Diagnostic(rel, 0, 0, f"unsafe path component {bad[0]!r}"))
    if len(data) > MAX_FILE_BYTES:
        out.append(Diagnostic(rel, 0, 0, f"file is {len(data)} bytes; the limit is 1 MiB"))
    else:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(Diagnostic(rel, 0, 0, f"not valid UTF-8 (bad byte at offset {exc.start})"))
    return out


def _walk(root: Path, top: str, problems: list[Diagnostic]) -> Iterator[tuple[str, Path]]:
    stack = [top]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(root / rel_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}"
            if entry.is_symlink():
                problems.append(Diagnostic(rel, 0, 0, "symbolic links are not allowed in config"))
            elif entry.is_dir(follow_symlinks=False):
                too_deep = check_file(rel, b"") if rel.count("/") >= MAX_DEPTH - 1 else []
                problems.extend(too_deep)
                if not too_deep:
                    stack.append(rel)
            elif entry.name.endswith(SUFFIXES):
                if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                    problems.append(Diagnostic(rel, 0, 0, "not a regular file"))
                else:
                    yield rel, Path(entry.path)


def read_repo_files(root: Path) -> dict[str, bytes]:
    """Every ``*.yaml``/``*.yml`` under ``budgets/ inventory/ policies/``, by repo-relative path.

    Raises ConfigError listing every refused file."""
    problems: list[Diagnostic] = []
    files: dict[str, bytes] = {}
    total = 0
    root = Path(root)
    if not root.is_dir():
        raise ConfigError([Diagnostic(str(root), 0, 0, "config repository folder not found")])
    for top in CONFIG_DIRS:
        path = root / top
        if path.is_symlink():
            problems.append(Diagnostic(top, 0, 0, "symbolic links are not allowed in config"))
            continue
        if not path.is_dir():
            continue
        for rel, file in _walk(root, top, problems):
            if len(files) >= MAX_FILES:
                problems.append(Diagnostic(rel, 0, 0, f"more than {MAX_FILES} config files"))
                break
            size = file.stat().st_size
            if size > MAX_FILE_BYTES:
                problems.append(Diagnostic(rel, 0, 0, f"file is {size} bytes; the limit is 1 MiB"))
                continue
            total += size
            if total > MAX_TOTAL_BYTES:
                problems.append(Diagnostic(rel, 0, 0, "config files exceed 64 MiB in total"))
                break
            data = file.read_bytes()
            problems.extend(check_file(rel, data))
            files[rel] = data
    if problems:
        raise ConfigError(problems)
    return dict(sorted(files.items()))
