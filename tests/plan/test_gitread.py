"""Reading a revision from git objects: same bytes as a checkout, same refusals, no side effects."""

from __future__ import annotations

import subprocess

import pytest

from allotment.config.files import read_repo_files
from allotment.errors import ConfigError
from allotment.plan.gitread import merge_base, open_repo, read_revision_files, resolve
from tests.plan.gitrepo import GitRepo


def test_revision_files_equal_the_checkout(small_repo: GitRepo) -> None:
    small_repo.write("budgets/README.md", "not config, ignored by both readers\n")
    small_repo.commit("docs")
    with open_repo(small_repo.path) as repo:
        assert read_revision_files(repo, small_repo.sha("HEAD")) == read_repo_files(small_repo.path)


def test_old_revision_is_read_while_worktree_differs(small_repo: GitRepo) -> None:
    first = small_repo.sha("HEAD")
    small_repo.set_share("budgets/acme/budget.yaml", "ml", 99)
    small_repo.commit("more ml")
    with open_repo(small_repo.path) as repo:
        files = read_revision_files(repo, first)
    assert b"share: 60" in files["budgets/acme/budget.yaml"]


def _craft(repo: GitRepo, entries: str, sub: str = "budgets") -> str:
    """Commit a tree whose ``sub`` folder is exactly ``entries`` (mktree lines), on top of HEAD."""
    inner = subprocess.run(
        ["git", "mktree"], cwd=repo.path, input=entries, capture_output=True, text=True, check=True
    ).stdout.strip()
    top = repo.git("ls-tree", "HEAD")
    lines = [ln for ln in top.splitlines() if not ln.endswith(f"\t{sub}")]
    lines.append(f"040000 tree {inner}\t{sub}")
    tree = subprocess.run(
        ["git", "mktree"],
        cwd=repo.path,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return repo.git("commit-tree", tree, "-p", "HEAD", "-m", "crafted")


def _blob(repo: GitRepo, data: bytes) -> str:
    return (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo.path,
            input=data,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def _errors(repo: GitRepo, sha: str) -> str:
    with pytest.raises(ConfigError) as exc, open_repo(repo.path) as git_repo:
        read_revision_files(git_repo, sha)
    return str(exc.value)


def test_symlink_in_config_is_refused(small_repo: GitRepo) -> None:
    target = _blob(small_repo, b"/etc/passwd")
    sha = _craft(small_repo, f"120000 blob {target}\tevil.yaml\n")
    assert "budgets/evil.yaml:0:0: symbolic links are not allowed" in _errors(small_repo, sha)


def test_submodule_in_config_is_refused(small_repo: GitRepo) -> None:
    sha = _craft(small_repo, f"160000 commit {small_repo.sha('HEAD')}\tvendored\n")
    assert "budgets/vendored:0:0: submodules are not allowed" in _errors(small_repo, sha)


def test_path_traversal_name_is_refused(small_repo: GitRepo) -> None:
    blob = _blob(small_repo, b"owners: []\n")
    inner = subprocess.run(
        ["git", "mktree"],
        cwd=small_repo.path,
        input=f"100644 blob {blob}\tpasswd.yaml\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    sha = _craft(small_repo, f"040000 tree {inner}\t..\n")
    assert "unsafe path component '..'" in _errors(small_repo, sha)


def test_huge_file_is_refused_before_reading(small_repo: GitRepo) -> None:
    blob = _blob(small_repo, b"#" * (1024 * 1024 + 1))
    sha = _craft(small_repo, f"100644 blob {blob}\thuge.yaml\n")
    assert "budgets/huge.yaml:0:0: file is 1048577 bytes; the limit is 1 MiB" in _errors(
        small_repo, sha
    )


def test_every_problem_is_reported_at_once(small_repo: GitRepo) -> None:
    link = _blob(small_repo, b"x")
    bad = _blob(small_repo, b"\xff\xfe")
    sha = _craft(small_repo, f"120000 blob {link}\ta.yaml\n100644 blob {bad}\tb.yaml\n")
    text = _errors(small_repo, sha)
    assert "budgets/a.yaml" in text
    assert "budgets/b.yaml:0:0: not valid UTF-8" in text


def test_merge_base_and_resolve(small_repo: GitRepo) -> None:
    root = small_repo.sha("HEAD")
    small_repo.switch("pr", create=True)
    small_repo.commit("pr work")
    small_repo.switch("main")
    small_repo.commit("main work")
    with open_repo(small_repo.path) as repo:
        assert merge_base(repo, "main", "pr").sha == root
        assert resolve(repo, "pr").author_email == "alice@acme.example"
