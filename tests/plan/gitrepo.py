"""Real git repositories in temporary folders, driven through the git CLI.

Every commit gets a fixed author, committer and date (one minute apart), so commit ids, and the
plan comments that name them, are the same on every run and every machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

DATA = Path(__file__).parent / "data"
EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z


class GitRepo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tick = 0
        self.home = path.parent / f"{path.name}-home"
        self.home.mkdir(exist_ok=True)
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    @classmethod
    def from_data(cls, path: Path, name: str = "small") -> GitRepo:
        repo = cls(path)
        for top in ("budgets", "inventory", "policies"):
            src = DATA / name / top
            if src.exists():
                shutil.copytree(src, path / top)
        return repo

    def env(self, author: str) -> dict[str, str]:
        name = author.split("@", 1)[0]
        date = f"{EPOCH + 60 * self.tick} +0000"
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": author,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": "merge-bot",
            "GIT_COMMITTER_EMAIL": "bot@acme.example",
            "GIT_COMMITTER_DATE": date,
        }

    def git(self, *args: str, author: str = "alice@acme.example") -> str:
        out = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
            cwd=self.path,
            env=self.env(author),
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def write(self, rel: str, text: str | bytes) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")

    def edit_yaml(self, rel: str, change: Callable[[Any], None]) -> None:
        """Round-trip edit (comments and order kept), as a manager's editor would."""
        yaml = YAML()
        p = self.path / rel
        doc = yaml.load(p.read_text(encoding="utf-8"))
        change(doc)
        with p.open("w", encoding="utf-8") as f:
            yaml.dump(doc, f)

    def set_share(self, node_file: str, child: str, share: float) -> None:
        def change(doc: Any) -> None:
            doc["children"][child]["share"] = share

        self.edit_yaml(node_file, change)

    def commit(self, message: str, author: str = "alice@acme.example") -> str:
        self.tick += 1
        self.git("add", "-A", author=author)
        self.git("commit", "-q", "--allow-empty", "-m", message, author=author)
        return self.sha("HEAD")

    def switch(self, branch: str, create: bool = False) -> None:
        self.git("switch", "-q", *(["-c"] if create else []), branch)

    def merge(self, branch: str, message: str, author: str = "bot@acme.example") -> str:
        self.tick += 1
        self.git("merge", "-q", "--no-ff", "-m", message, branch, author=author)
        return self.sha("HEAD")

    def squash(self, branch: str, message: str, author: str) -> str:
        self.tick += 1
        self.git("merge", "-q", "--squash", branch, author=author)
        self.git("commit", "-q", "-m", message, author=author)
        return self.sha("HEAD")

    def sha(self, rev: str) -> str:
        return self.git("rev-parse", rev)
