"""Which code runs is judged by the content of the sources compiled, not by timestamps (issue 26).

A wheel or ``pip install .`` writes every ``.py`` after its extension module, so a timestamp
check judged a fresh install stale and ran pure Python.  These tests lay out fake extension
files (never imported: ``judge`` only looks at paths and the record) in the order an install
writes them, and check the verdict; building a real wheel takes minutes of mypyc on this machine.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

from allotment import _compiled

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def _install(tmp: Path) -> tuple[dict[str, tuple[Path, list[Path]]], dict[str, str]]:
    """Two hot modules as an install leaves them: extension first, then the source, newer."""
    found: dict[str, tuple[Path, list[Path]]] = {}
    record: dict[str, str] = {}
    for i, name in enumerate(("a", "b")):
        ext = tmp / f"{name}{SUFFIX}"
        ext.write_bytes(b"\x7fELF fake")
        py = tmp / f"{name}.py"
        py.write_text(f"X = {i}\n")
        os.utime(ext, (1_000, 1_000))
        os.utime(py, (2_000, 2_000))  # the source is written after the extension
        found[f"allotment.{name}"] = (py, [ext])
        record[f"allotment.{name}"] = _compiled.source_digest(py)
    return found, record


def test_a_fresh_install_whose_sources_are_newer_than_its_extensions_runs_compiled(tmp_path: Path) -> None:
    found, record = _install(tmp_path)
    assert _compiled.judge(found, record, forced=False) == "compiled with mypyc"


def test_an_edited_source_runs_pure_whatever_its_timestamp(tmp_path: Path) -> None:
    found, record = _install(tmp_path)
    py = found["allotment.b"][0]
    py.write_text("X = 99\n")
    os.utime(py, (500, 500))  # even older than the extension: content decides
    mode = _compiled.judge(found, record, forced=False)
    assert mode == "pure Python (a source changed since the build: reinstall)"
    assert _compiled.stale_modules(found, record) == ["allotment.b"]


def test_a_build_without_a_record_is_judged_by_timestamps_as_before(tmp_path: Path) -> None:
    found, _ = _install(tmp_path)
    assert _compiled.judge(found, None, forced=False) == (
        "pure Python (compiled modules are older than their source)"
    )


def test_a_pure_install_says_why(tmp_path: Path) -> None:
    found, record = _install(tmp_path)
    found["allotment.a"] = (found["allotment.a"][0], [])
    assert _compiled.judge(found, record, forced=False).startswith(
        "pure Python (not compiled"
    )
    assert _compiled.judge(found, record, forced=True) == "pure Python (ALLOTMENT_PURE=1)"


def test_setup_records_the_digest_of_every_hot_source(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for name in _compiled.HOT:
        py = src / Path(*name.split(".")).with_suffix(".py")
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(f"# {name}\n")
    out = _compiled.write_record(src)
    record = _compiled._read_record(src)
    assert out.name == _compiled.RECORD and record is not None and set(record) == set(_compiled.HOT)
    first = _compiled.HOT[0]
    assert record[first] == _compiled.source_digest(src / Path(*first.split(".")).with_suffix(".py"))
