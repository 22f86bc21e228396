"""The one atomic file writer (``allotment.atomic_file``): outputs keep the user's umask, and a
failed write leaves the old file and no temporary behind."""

from __future__ import annotations

import os
import stat
import threading
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


def _drain(fifo: Path) -> tuple[list[bytes], threading.Thread]:
    """A reader of ``fifo`` on a thread, so writers never block; its bytes land in the list."""
    got: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as f:
            got.append(f.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return got, t


def test_a_device_or_fifo_is_written_in_place_never_replaced_by_a_plain_file(tmp_path: Path) -> None:
    """``allot simulate --json /dev/null`` renamed a temporary file over /dev/null: the machine
    was left with a plain file there.  A FIFO stands in for the device (the test must not risk
    the real one)."""
    from allotment.sim.event_file import EventFile
    from allotment.sim.events import Event, RunHeader
    from allotment.traces.writer import AtomicWriter

    for write in ("text", "lines", "events"):
        fifo = tmp_path / f"{write}.fifo"
        os.mkfifo(fifo)
        got, reader = _drain(fifo)
        if write == "text":
            write_text(fifo, "hello\n")
        elif write == "lines":
            with AtomicWriter(fifo) as w:
                w.write_line("a")
        else:
            ev = EventFile(fifo)
            ev(Event(1.0, "end", "j1", "a", 1, charged_gpu_hours=0.0))
            ev.finish(RunHeader("budgets", "c1", 0, 10.0, 8, {"n1": 8}, {"a": 8.0}, {}, 900.0, 8))
        reader.join(timeout=10)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{write}: the FIFO was replaced"
        assert got and got[0], f"{write}: nothing reached the reader"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_symlink_to_a_device_is_written_through_one_to_a_file_is_replaced_itself(tmp_path: Path) -> None:
    """``/dev/stdout`` is a symlink to a device: written through, as the device itself.  A link to
    a regular file is replaced, its target untouched (a link planted in an output folder must not
    redirect a write: tests/plan/test_hardening.py)."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "stdout"
    link.symlink_to(fifo)
    got, reader = _drain(fifo)
    write_text(link, "through\n")
    reader.join(timeout=10)
    assert link.is_symlink() and got == [b"through\n"]
    real = tmp_path / "real.json"
    real.write_text("keep\n")
    planted = tmp_path / "planted.json"
    planted.symlink_to(real)
    write_text(planted, "new\n")
    assert not planted.is_symlink() and planted.read_text() == "new\n" and real.read_text() == "keep\n"
