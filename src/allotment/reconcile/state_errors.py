"""The two ways the reconciler's own state dir fails, told apart because they need different
fixes: ``StateDirError`` (exit 3) when the dir cannot be written or read (full disk, read-only
mount, permissions: fix the machine and restart), ``StateFileError`` (exit 2) when a file in it
is not what the reconciler wrote (a truncated ``ledger.sqlite``, a ``status.json`` holding
``null``: move the file aside, and the next start rebuilds it from the backend and sacct).
Both are one-line errors; neither ever leaves a status that says Ready (see ``status``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from allotment.atomic_file import write_text
from allotment.errors import ReconcileError, UsageError


class StateDirError(ReconcileError):
    """The state dir refuses a read or write."""

    exit_code = 3


class StateFileError(UsageError):
    """A file in the state dir is corrupt or of the wrong shape."""

    exit_code = 2


def ledger_error(exc: sqlite3.DatabaseError, path: Path) -> StateDirError | StateFileError:
    """A corrupt or foreign file is a bad file (exit 2); a full, read-only or locked dir is a
    failing state dir (exit 3).  One line either way."""
    text = str(exc)
    bad = ("not a database", "malformed", "no such column", "no such table", "file is encrypted")
    if any(b in text for b in bad):
        return StateFileError(f"{path}: not a usage ledger ({text}); move it aside to rebuild")
    return StateDirError(f"{path}: {text}")


def check_writable(state_dir: Path) -> None:
    """Fail at start, in one line, on a state dir that cannot be written (read-only mount,
    full disk), rather than with a traceback at the first write."""
    probe = state_dir / ".write-probe"
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        with probe.open("w") as f:
            f.write("ok\n")
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
    except OSError as exc:
        raise StateDirError(
            f"state dir {state_dir} is not writable: {exc.strerror or exc}"
        ) from exc


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file beside it, fsync, rename), so a
    reader never sees half a file; StateDirError in one line when the dir refuses."""
    try:
        write_text(path, text, durable=True)
    except OSError as exc:
        raise StateDirError(f"cannot write {path}: {exc.strerror or exc}") from exc


def state_error(
    exc: OSError | sqlite3.DatabaseError, state_dir: Path
) -> StateDirError | StateFileError:
    if isinstance(exc, sqlite3.DatabaseError):
        return ledger_error(exc, state_dir / "ledger.sqlite")
    where = exc.filename or state_dir
    return StateDirError(f"{where}: {exc.strerror or exc}")
