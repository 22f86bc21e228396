"""The bad-input corpus: each case under ``bad/<case>/`` overlays a small valid base repo.

A case holds the files it replaces or adds (same repo-relative paths), optionally ``delete.txt``
(base paths to remove) and ``expected.txt``: the exact stderr of ``allot validate``.  Exit status
follows from it: 2 when any line is an error, 0 when all are warnings.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).parent
BASE = HERE / "base"
BAD = HERE / "bad"
AT = "2026-06-01"
META = {"expected.txt", "delete.txt"}


def cases() -> list[str]:
    return sorted(p.name for p in BAD.iterdir() if p.is_dir())


def materialize(case: str, dest: Path) -> Path:
    """Copy the base repo to ``dest`` and apply the case's overlay."""
    shutil.copytree(BASE, dest)
    case_dir = BAD / case
    delete = case_dir / "delete.txt"
    if delete.exists():
        for rel in delete.read_text(encoding="utf-8").split():
            (dest / rel).unlink()
    for f in sorted(case_dir.rglob("*")):
        rel = f.relative_to(case_dir)
        if f.is_file() and str(rel) not in META:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest / rel)
    return dest
