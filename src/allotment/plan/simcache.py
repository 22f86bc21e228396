"""Where simulated metrics are kept between plans, and why a pull request cannot forge them.

A plan's projected impact must come from the simulator, never from bytes the pull request chose
(issue 14, item 2: a PR once committed ``.allot-cache/plan/<key>.json`` and turned real drops into
"+0").  So:

* The cache folder is outside the checkout: ``--cache-dir``, else ``$XDG_CACHE_HOME/allotment``,
  else ``~/.cache/allotment``.  A folder inside the repository being planned is refused.
* An entry is bound to what it was computed from: its file name is the sha256 of the tool version,
  the simulator's source, the side's compiled inputs, the workload recipe and the seed, and the
  entry repeats that key; an entry whose stored key differs is ignored and recomputed.
* An entry also holds the sha256 of its metrics as written, and the metrics must have the shape
  the plan reads (``teams`` a mapping of mappings, every number finite): a torn, hand-edited or
  garbage entry with the right key is recomputed, never read as "not reported" (issue 32, 10).
* In CI (``CI=true``) the default is no cache at all: a runner's cache can be restored from a
  run the PR's own workflow file shaped.  An explicit ``--cache-dir`` still applies.
* Symlinks are never followed: a cache folder (or its ``plan/`` sub-folder, or an entry) that is
  a symlink is not used, and entries are written to a temporary file in the folder itself and
  renamed, so nothing is ever written outside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.atomic_file import write_text
from allotment.strict_json import loads_finite

SUBDIR = "plan"


@dataclass(frozen=True, slots=True)
class CacheChoice:
    """The folder used (None: no cache) and, when it is not the one asked for, why."""

    folder: Path | None
    note: str = ""


def default_cache_dir(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path(env.get("HOME", "~")) / ".cache"
    return base.expanduser() / "allotment"


def choose_cache(explicit: Path | None, repo_root: Path | None, env: Mapping[str, str]) -> CacheChoice:
    """Apply the rules in the module docstring; never raises."""
    if explicit is None and env.get("CI", "").lower() == "true":
        return CacheChoice(None, "no simulation cache in CI (CI=true): both sides simulated")
    folder = explicit if explicit is not None else default_cache_dir(env)
    folder = Path(os.path.abspath(folder))
    if repo_root is not None:
        root = Path(os.path.realpath(repo_root))
        if Path(os.path.realpath(folder)) == root or root in Path(os.path.realpath(folder)).parents:
            return CacheChoice(None, f"cache folder {folder} is inside the repository: not used")
    for p in (folder, folder / SUBDIR):
        if p.is_symlink():
            return CacheChoice(None, f"cache folder {p} is a symlink: not used")
    return CacheChoice(folder)


class SimCache:
    """Metrics by key in ``folder/plan/<key>.json``; a ``None`` folder caches nothing."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path | None:
        if self.folder is None or len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            return None
        return self.folder / SUBDIR / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None  # missing, or a symlink
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            with os.fdopen(fd, "r", encoding="utf-8") as f:
                fd = -1
                entry = loads_finite(f.read())
        except (OSError, ValueError):
            return None  # unreadable or corrupt: recompute
        finally:
            if fd >= 0:
                os.close(fd)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        metrics = entry.get("metrics")
        if not _metrics_shape(metrics) or entry.get("sha256") != _digest(metrics):
            return None
        return metrics

    def put(self, key: str, metrics: Mapping[str, Any]) -> None:
        """Best effort: a cache that cannot be written costs time, never the plan."""
        path = self._path(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.parent.is_symlink() or path.parent.parent.is_symlink():
                return
            # the rename replaces a symlink itself, never its target
            entry = {"key": key, "metrics": metrics, "sha256": _digest(metrics)}
            write_text(path, json.dumps(entry, sort_keys=True))
        except OSError:
            return


def _digest(metrics: Any) -> str:
    """sha256 of the metrics in one canonical form (sorted keys), as ``put`` wrote them."""
    return hashlib.sha256(json.dumps(metrics, sort_keys=True).encode()).hexdigest()


def _metrics_shape(metrics: Any) -> bool:
    """What the plan reads (``impact_stats``): a mapping, its ``teams`` a mapping of mappings."""
    if not isinstance(metrics, dict):
        return False
    teams = metrics.get("teams", {})
    return isinstance(teams, dict) and all(isinstance(t, dict) for t in teams.values())
