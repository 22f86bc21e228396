"""Where the reconciler reads the budget repository from: a git URL or path (cloned, bare, into
the state dir and fetched every tick with GitPython) or a plain folder (no revisions).

Files are read from git objects, never from a work tree, and filtered exactly as ``allot
validate``/``allot plan`` read them (``config.files``), so the compiled ``inputs_sha256`` is the
one a plan comment showed for the same commit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import git
from git.objects import Blob, Tree

from allotment.config.files import CONFIG_DIRS, check_file, is_config_path, read_repo_files
from allotment.errors import BackendError, ConfigError, Diagnostic, UsageError

log = logging.getLogger(__name__)
_SYMLINK = 0o120000


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    committed_unix: int
    summary: str


class GitSource:
    """A bare clone in ``<state>/source.git`` of ``url``; ``fetch`` updates ``branch``."""

    def __init__(self, url: str, branch: str, state_dir: Path) -> None:
        if branch.startswith("-") or not branch.strip():
            raise UsageError(f"not a branch name: {branch!r}")
        self.url, self.branch = url, branch
        self.path = state_dir / "source.git"
        self._repo: git.Repo | None = None

    def fetch(self) -> None:
        """Clone on first use, then fetch; network and git errors are BackendErrors (the tick
        goes Stalled and keeps the last good revision)."""
        try:
            if self._repo is None and (self.path / "HEAD").exists():
                self._repo = git.Repo(self.path)
            if self._repo is None:
                self._repo = git.Repo.clone_from(self.url, self.path, bare=True, no_checkout=True)
            self._repo.remotes.origin.fetch(
                f"+refs/heads/{self.branch}:refs/heads/{self.branch}", prune=False
            )
        except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise BackendError(f"cannot fetch {self.url} ({self.branch}): {_git_msg(exc)}") from exc

    def close(self) -> None:
        """Stop GitPython's helper processes (``git cat-file``) and close their pipes."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    def history(self, limit: int) -> tuple[Commit, ...]:
        """The newest ``limit`` first-parent commits of the branch, newest first."""
        repo = self._need()
        try:
            commits = repo.iter_commits(self.branch, max_count=limit, first_parent=True)
            return tuple(Commit(c.hexsha, int(c.committed_date), str(c.summary)) for c in commits)
        except (git.GitCommandError, ValueError) as exc:
            raise BackendError(f"branch {self.branch!r} not found in {self.url}") from exc

    def files(self, sha: str) -> dict[str, bytes]:
        """Config files of ``sha``; ConfigError for anything unsafe (symlinks, bad names...)."""
        tree = self._need().commit(sha).tree
        out: dict[str, bytes] = {}
        problems: list[Diagnostic] = []
        for top in CONFIG_DIRS:
            try:
                sub = tree / top
            except KeyError:
                continue
            for obj in sub.traverse() if isinstance(sub, Tree) else ():
                if not isinstance(obj, Blob):
                    continue
                path = str(obj.path)
                if not is_config_path(path):
                    continue
                if obj.mode == _SYMLINK:
                    problems.append(
                        Diagnostic(path, 0, 0, "symbolic links are not allowed in config")
                    )
                    continue
                data = obj.data_stream.read()
                bad = check_file(path, data)
                if bad:
                    problems.extend(bad)
                    continue
                out[path] = data
        if problems:
            raise ConfigError(problems)
        return dict(sorted(out.items()))

    def _need(self) -> git.Repo:
        if self._repo is None:
            self.fetch()
        assert self._repo is not None
        return self._repo


class DirSource:
    """A plain folder: one pseudo-revision, ``dir``; re-read every tick."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fetch(self) -> None:
        if not self.root.is_dir():
            raise BackendError(f"source folder {self.root} not found")

    def close(self) -> None:
        return None

    def history(self, limit: int) -> tuple[Commit, ...]:
        return (Commit("dir", 0, str(self.root)),)

    def files(self, sha: str) -> dict[str, bytes]:
        return read_repo_files(self.root)


Source = GitSource | DirSource


def open_source(spec: str, branch: str, state_dir: Path) -> Source:
    """A URL, a git repository path, or a plain folder."""
    p = Path(spec)
    if "://" in spec or spec.startswith("git@") or (p / ".git").exists() or (p / "HEAD").is_file():
        url = str(p.resolve()) if p.exists() else spec
        return GitSource(url, branch, state_dir)
    if p.is_dir():
        return DirSource(p)
    raise UsageError(f"--source {spec}: not a folder, git repository or URL")


def _git_msg(exc: Exception) -> str:
    if isinstance(exc, git.GitCommandError):
        text = str(exc.stderr or exc).strip().splitlines()
        return text[-1].strip() if text else str(exc)
    return str(exc)
