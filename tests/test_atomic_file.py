"""The one atomic file writer (``allotment.atomic_file``): outputs keep the user's umask, and a
failed write leaves the old file and no temporary behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.atomic_file import write_text


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_written_file_has_the_mode_the_umask_gives(tmp_path: Path, umask_022: None) -> None:
    out = tmp_path / "plan.md"
    write_text(out, "hello\n")
    assert out.read_text() == "hello\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o644  # mkstemp would have made it 0600


def test_durable_write_replaces_the_old_content(tmp_path: Path) -> None:
    out = tmp_path / "status.json"
    out.write_text("old")
    write_text(out, "new", durable=True)
    assert out.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "plan.md"
    out.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text(out, "bad \udcff surrogate")
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.md"]
