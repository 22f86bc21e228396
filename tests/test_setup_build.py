"""``setup.py``: what a build compiles, run with mypyc and setuptools replaced by recorders.

A pre-commit hook only validates YAML, but pre-commit installs its hook repository with
``pip install .`` in its own store, and compiling the core for that took about three minutes
(issue 26).  Inside pre-commit's store nothing is compiled; anywhere else the hot modules are,
and the digest of each compiled source is recorded for the staleness check.
"""

from __future__ import annotations

import os
import runpy
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT


def build(
    where: Path, monkeypatch: pytest.MonkeyPatch, command: str = "bdist_wheel", **env: str
) -> dict[str, Any]:
    """Run a copy of setup.py in ``where`` for ``command``; returns what it handed to setuptools."""
    (where / "src" / "allotment").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "setup.py", where / "setup.py")
    shutil.copy(REPO_ROOT / "src/allotment/_compiled.py", where / "src/allotment/_compiled.py")
    hot = runpy.run_path(str(where / "src/allotment/_compiled.py"))["HOT"]
    for name in hot:
        py = where / "src" / Path(*name.split(".")).with_suffix(".py")
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(f"# {name}\n")
    seen: dict[str, Any] = {}
    mypyc = types.ModuleType("mypyc.build")
    mypyc.mypycify = lambda args, **kw: [f"ext:{a}" for a in args if a.endswith(".py")]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mypyc.build", mypyc)
    monkeypatch.setattr("setuptools.setup", lambda **kw: seen.update(kw))
    for k in ("PRE_COMMIT_HOME", "XDG_CACHE_HOME", "ALLOTMENT_COMPILE"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(where)
    monkeypatch.setattr(sys, "argv", ["setup.py", command, "--dist-dir", str(where / "dist")])
    runpy.run_path(str(where / "setup.py"))
    return seen


def test_a_build_compiles_the_hot_modules_and_records_their_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = build(tmp_path / "checkout", monkeypatch, PRE_COMMIT_HOME=str(tmp_path / "store"))
    assert len(seen["ext_modules"]) > 30
    assert (tmp_path / "checkout/src/allotment/_compiled_sources.json").exists()


def test_a_build_inside_pre_commits_store_compiles_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    seen = build(store / "repoabc123", monkeypatch, PRE_COMMIT_HOME=str(store))
    assert seen["ext_modules"] == []
    assert not (store / "repoabc123/src/allotment/_compiled_sources.json").exists()


def test_pre_commits_default_store_is_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = build(tmp_path / "cache" / "pre-commit" / "repo1", monkeypatch,
                 XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert seen["ext_modules"] == []


def test_allotment_compile_0_compiles_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = build(tmp_path / "checkout", monkeypatch, ALLOTMENT_COMPILE="0",
                 PRE_COMMIT_HOME=str(tmp_path / "store"))
    assert seen["ext_modules"] == []
    assert os.environ["ALLOTMENT_COMPILE"] == "0"


def test_metadata_and_sdist_steps_compile_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m build`` runs setup.py for egg_info, sdist, egg_info again and bdist_wheel: the
    mypyc pass (a whole-core type check and C generation) ran for each, four times for one wheel."""
    for i, command in enumerate(("egg_info", "dist_info", "sdist")):
        seen = build(tmp_path / f"c{i}", monkeypatch, command, PRE_COMMIT_HOME=str(tmp_path / "store"))
        assert seen["ext_modules"] == [], command
    for i, command in enumerate(("bdist_wheel", "editable_wheel", "build_ext")):
        seen = build(tmp_path / f"b{i}", monkeypatch, command, PRE_COMMIT_HOME=str(tmp_path / "store"))
        assert len(seen["ext_modules"]) > 30, command
