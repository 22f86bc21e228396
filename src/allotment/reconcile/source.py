"""Where the reconciler reads the budget repository from: a git URL or path (fetched, bare, into
the state dir every tick) or a plain folder (no revisions).

Files are read from git objects, never from a work tree, by the one git reader ``allot plan``
uses too (``config.gitrevision``), so a commit is refused or accepted, and compiles to the same
``inputs_sha256``, exactly as its plan comment said.

The network is the one place a tick can hang (a git server that accepts the connection and never
answers), so ``fetch`` runs ``git`` itself as a child in its own process group with a timeout,
killing the whole group (``git-remote-http``, ``ssh``) when it expires; credentials are never
prompted for.  What was fetched before stays usable: the reconciler keeps driving its last good
revision from the local copy while the server is away.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import git

from allotment.config.files import read_repo_files
from allotment.config.gitrevision import read_revision_files
from allotment.errors import BackendError, UsageError

log = logging.getLogger(__name__)
DEFAULT_GIT_TIMEOUT_S = 60.0
_MESSAGE_CHARS = 400
LOCAL_COPY = "source.git"  # the bare copy a GitSource fetches into, in the state dir


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    committed_unix: int
    summary: str


class GitSource:
    """A bare repository in ``<state>/source.git``; ``fetch`` brings ``branch`` from ``url``."""

    def __init__(
        self, url: str, branch: str, state_dir: Path, *, timeout_s: float = DEFAULT_GIT_TIMEOUT_S
    ) -> None:
        if branch.startswith("-") or not branch.strip():
            raise UsageError(f"not a branch name: {branch!r}")
        if url.startswith("-"):
            raise UsageError(f"not a source: {url!r}")
        self.url, self.branch, self.timeout_s = url, branch, timeout_s
        self.path = state_dir / LOCAL_COPY
        self._repo: git.Repo | None = None

    def fetch(self) -> None:
        """Fetch ``branch`` (a new local repository on first use); a network or git error, or
        no answer within ``timeout_s``, is a BackendError (the tick goes Stalled and keeps
        driving the last good revision)."""
        if not (self.path / "HEAD").exists():
            self._git(["git", "init", "--bare", "-q", str(self.path)])
        ref = f"+refs/heads/{self.branch}:refs/heads/{self.branch}"
        self._git(
            ["git", f"--git-dir={self.path}", "fetch", "-q", "--no-tags", "--", self.url, ref]
        )

    def close(self) -> None:
        """Stop GitPython's helper processes (``git cat-file``) and close their pipes."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    def history(self, limit: int) -> tuple[Commit, ...]:
        """The newest ``limit`` first-parent commits of the branch, newest first (from the
        local copy: no network)."""
        repo = self._open()
        try:
            commits = repo.iter_commits(self.branch, max_count=limit, first_parent=True)
            return tuple(Commit(c.hexsha, int(c.committed_date), str(c.summary)) for c in commits)
        except (git.GitCommandError, ValueError) as exc:
            raise BackendError(f"branch {self.branch!r} not found in {self.url}") from exc

    def has(self, sha: str) -> bool:
        """Whether the local copy holds commit ``sha`` (the last good one, after a force push)."""
        try:
            self._open().commit(sha)
        except (ValueError, git.BadName, git.GitCommandError, BackendError):
            return False
        return True

    def files(self, sha: str) -> dict[str, bytes]:
        """Config files of ``sha``; ConfigError for anything unsafe (see ``config.gitrevision``)."""
        return read_revision_files(self._open(), sha)

    def _open(self) -> git.Repo:
        if self._repo is None:
            try:
                self._repo = git.Repo(self.path)
            except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
                raise BackendError(f"no local copy of {self.url} yet (never fetched)") from exc
        return self._repo

    def _git(self, argv: list[str]) -> None:
        env = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
            "SSH_ASKPASS": "/bin/false",
            "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=15",
        }
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        try:
            _, err = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise BackendError(
                f"cannot fetch {self.url} ({self.branch}): no answer in {self.timeout_s:g} s"
            ) from None
        if proc.returncode != 0:
            raise BackendError(f"cannot fetch {self.url} ({self.branch}): {git_message(err)}")


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

    def has(self, sha: str) -> bool:
        return sha == "dir"

    def files(self, sha: str) -> dict[str, bytes]:
        return read_repo_files(self.root)


Source = GitSource | DirSource


def open_source(
    spec: str, branch: str, state_dir: Path, *, timeout_s: float = DEFAULT_GIT_TIMEOUT_S
) -> Source:
    """A URL, a git repository path, or a plain folder."""
    p = Path(spec)
    if "://" in spec or spec.startswith("git@") or (p / ".git").exists() or (p / "HEAD").is_file():
        url = str(p.resolve()) if p.exists() else spec
        return GitSource(url, branch, state_dir, timeout_s=timeout_s)
    if p.is_dir():
        return DirSource(p)
    if not p.exists() and (state_dir / LOCAL_COPY / "HEAD").is_file():
        # A local git source that is gone (a moved checkout, an unmounted disk): start anyway,
        # as a running loop goes on when it vanishes, from the copy fetched before; each tick
        # says SourceUnavailable, keeps the last good revision and still drains and charges.
        log.warning("--source %s is gone; driving the last good revision of %s", spec,
                    state_dir / LOCAL_COPY)
        return GitSource(str(p.resolve()), branch, state_dir, timeout_s=timeout_s)
    raise UsageError(f"--source {spec}: not a folder, git repository or URL")


def git_message(stderr: bytes) -> str:
    """git's complaint on one line: every ``fatal:``/``error:`` line (all lines if none), joined,
    with no terminal control characters, cut at a word boundary with an ellipsis only when long."""
    text = stderr.decode("utf-8", "replace")
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    picked = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines
    msg = "".join(ch for ch in "; ".join(picked) if ch.isprintable()) or "git failed"
    if len(msg) > _MESSAGE_CHARS:
        msg = msg[:_MESSAGE_CHARS].rsplit(" ", 1)[0] + " ..."
    return msg
