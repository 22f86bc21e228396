"""Reading a repo from disk treats every file as hostile: links, size, encoding, names."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from allotment.config.files import MAX_FILE_BYTES, read_repo_files
from allotment.errors import ConfigError
from tests.config.corpus import BASE


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(BASE, dest)
    return dest


def _messages(exc: ConfigError) -> list[str]:
    return [d.format() for d in exc.diagnostics]


def test_reads_only_config_folders_keyed_by_posix_path(repo: Path) -> None:
    (repo / "README.md").write_text("not config")
    (repo / "budgets" / "acme" / "notes.txt").write_text("not yaml")
    files = read_repo_files(repo)
    assert "budgets/acme/budget.yaml" in files
    assert all(p.split("/")[0] in ("budgets", "inventory", "policies") for p in files)
    assert all(p.endswith((".yaml", ".yml")) for p in files)
    assert list(files) == sorted(files)


def test_symlink_escaping_the_repo_is_refused(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    os.symlink(secret, repo / "policies" / "leak.yaml")
    with pytest.raises(ConfigError) as err:
        read_repo_files(repo)
    assert _messages(err.value) == [
        "policies/leak.yaml:0:0: symbolic links are not allowed in config"
    ]


def test_symlinked_folder_loop_is_refused_not_followed(repo: Path) -> None:
    os.symlink(repo / "budgets" / "acme", repo / "budgets" / "acme" / "ops" / "loop")
    with pytest.raises(ConfigError) as err:
        read_repo_files(repo)
    assert _messages(err.value) == [
        "budgets/acme/ops/loop:0:0: symbolic links are not allowed in config"
    ]


def test_file_over_one_mebibyte_is_refused_unread(repo: Path) -> None:
    big = repo / "budgets" / "acme" / "ops" / "budget.yaml"
    big.write_bytes(b"# " + b"x" * MAX_FILE_BYTES + b"\n")
    with pytest.raises(ConfigError) as err:
        read_repo_files(repo)
    (msg,) = _messages(err.value)
    assert msg.startswith("budgets/acme/ops/budget.yaml:0:0: file is ")
    assert msg.endswith("bytes; the limit is 1 MiB")


def test_unsafe_file_name_is_refused(repo: Path) -> None:
    (repo / "policies" / "my boosts.yaml").write_text("boosts: []\n")
    with pytest.raises(ConfigError) as err:
        read_repo_files(repo)
    assert _messages(err.value) == [
        "policies/my boosts.yaml:0:0: unsafe path component 'my boosts.yaml'"
    ]


def test_missing_repo_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        read_repo_files(tmp_path / "nope")


def test_every_problem_is_reported_at_once(repo: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path, repo / "inventory" / "elsewhere")
    (repo / "policies" / "bad.yaml").write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError) as err:
        read_repo_files(repo)
    assert len(err.value.diagnostics) == 2
