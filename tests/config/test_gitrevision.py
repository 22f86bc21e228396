"""The one git reader (``config.gitrevision``) refuses hostile trees with positioned errors, and
``allot validate``, ``allot plan``'s reader and the reconciler refuse the same commits.

Every repository here is a real git repository in a temporary folder; the hostile trees are
written as raw git objects, as an attacker's ``git mktree`` would."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import git
import pytest
from gitdb import IStream, LooseObjectDB

from allotment.config.files import MAX_DEPTH, MAX_TOTAL_BYTES, read_repo_files
from allotment.config.gitrevision import read_revision_files
from allotment.errors import ConfigError
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import ACTOR, make_repo

_TREE, _BLOB = "40000", "100644"


def _store(repo: git.Repo, kind: str, data: bytes) -> bytes:
    """Write a loose object in-process (``git hash-object`` per object is 1,100 processes)."""
    odb = LooseObjectDB(str(Path(repo.git_dir) / "objects"))
    return bytes(odb.store(IStream(kind, len(data), io.BytesIO(data))).binsha)


def _tree(repo: git.Repo, entries: list[tuple[str, str, bytes]]) -> bytes:
    raw = b"".join(f"{m} {n}".encode() + b"\0" + sha for m, n, sha in entries)
    return _store(repo, "tree", raw)


def _commit_with_budgets(root: Path, budgets: bytes) -> str:
    """A commit on top of HEAD whose ``budgets`` folder is the tree ``budgets``."""
    with git.Repo(root) as repo:
        head = repo.head.commit
        top = [
            (_TREE if e.type == "tree" else _BLOB, e.name, e.binsha)
            for e in head.tree
            if e.name != "budgets"
        ]
        tree = _tree(repo, sorted([*top, (_TREE, "budgets", budgets)], key=lambda e: e[1]))
        commit = git.Commit.create_from_tree(
            repo,
            git.Tree(repo, tree),
            "hostile",
            parent_commits=[head],
            head=True,
            author=ACTOR,
            committer=ACTOR,
        )
        return str(commit.hexsha)


def _refusal(root: Path, sha: str) -> str:
    with git.Repo(root) as repo, pytest.raises(ConfigError) as exc:
        read_revision_files(repo, sha)
    return str(exc.value)


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    make_repo(tmp_path / "r")
    return tmp_path / "r"


def test_nesting_1100_folders_deep_is_refused_with_its_path_not_a_recursion_error(
    repo_dir: Path,
) -> None:
    with git.Repo(repo_dir) as repo:
        leaf = _tree(repo, [(_BLOB, "budget.yaml", _store(repo, "blob", b"owners: []\n"))])
        for _ in range(1100):
            leaf = _tree(repo, [(_TREE, "d", leaf)])
    sha = _commit_with_budgets(repo_dir, leaf)
    text = _refusal(repo_dir, sha)
    deep = "/".join(["budgets"] + ["d"] * MAX_DEPTH)
    assert f"{deep}:0:0: nested deeper than {MAX_DEPTH} folders" in text
    assert len(text.splitlines()) == 1  # refused once, at the first folder too deep


def test_the_same_deep_tree_is_refused_by_validate_from_a_checkout(tmp_path: Path) -> None:
    root = tmp_path / "deep"
    (root / "budgets").mkdir(parents=True)
    (root / "budgets" / "budget.yaml").write_text("owners: []\n")
    deep = root / "budgets" / "/".join(["d"] * 200)  # 1,100 exceeds PATH_MAX under /tmp
    deep.mkdir(parents=True)
    (deep / "budget.yaml").write_text("owners: []\n")
    with pytest.raises(ConfigError) as exc:
        read_repo_files(root)
    rel = "/".join(["budgets"] + ["d"] * MAX_DEPTH)
    assert str(exc.value) == f"{rel}:0:0: nested deeper than {MAX_DEPTH} folders"


def test_one_blob_under_300_names_is_refused_by_total_size_before_reading_them(
    repo_dir: Path,
) -> None:
    with git.Repo(repo_dir) as repo:
        blob = _store(repo, "blob", b"#" * (1024 * 1024 - 1))
        names = sorted(f"t{i:03d}.yaml" for i in range(300))
        sha = _commit_with_budgets(repo_dir, _tree(repo, [(_BLOB, n, blob) for n in names]))
    text = _refusal(repo_dir, sha)
    assert f"config files exceed {MAX_TOTAL_BYTES >> 20} MiB in total" in text
    assert "budgets/t064.yaml:0:0:" in text  # the 65th MiB is where it stops


def test_a_tree_entry_named_with_a_slash_is_refused(repo_dir: Path) -> None:
    with git.Repo(repo_dir) as repo:
        blob = _store(repo, "blob", b"owners: []\n")
        sha = _commit_with_budgets(repo_dir, _tree(repo, [(_BLOB, "olmo/budget.yaml", blob)]))
    assert "budgets/olmo/budget.yaml:0:0: tree entry name 'olmo/budget.yaml' holds a '/'" in (
        _refusal(repo_dir, sha)
    )


def test_the_reconciler_source_refuses_exactly_what_plan_refuses(
    repo_dir: Path, tmp_path: Path
) -> None:
    with git.Repo(repo_dir) as repo:
        blob = _store(repo, "blob", b"owners: []\n")
        sha = _commit_with_budgets(repo_dir, _tree(repo, [(_BLOB, "olmo/budget.yaml", blob)]))
    src = GitSource(str(repo_dir), "main", tmp_path / "state")
    try:
        src.fetch()
        with pytest.raises(ConfigError) as exc:
            src.files(sha)
    finally:
        src.close()
    assert str(exc.value) == _refusal(repo_dir, sha)


def test_a_clean_revision_reads_as_its_checkout(repo_dir: Path, tmp_path: Path) -> None:
    shutil.rmtree(repo_dir / "inventory" / "clusters")  # nested folders and plain files alike
    with git.Repo(repo_dir) as repo:
        repo.git.add("-A")
        sha = repo.index.commit("fewer", author=ACTOR, committer=ACTOR).hexsha
        assert read_revision_files(repo, sha) == read_repo_files(repo_dir)
