"""Replacing a file so that no reader ever sees half of it, in one place.

Every output the tool writes (plan comments and reports, traces, event logs, the reconciler's
status and observation files) goes through a temporary file beside its target, renamed over it
only when complete: a crash or a refused write leaves the old file, never a torn one.

The temporary file is a *named file opened exclusively* (``x`` mode), not ``tempfile.mkstemp``:
mkstemp creates files with mode 0600 whatever the user's umask, so a plan comment written for a
CI job or a status file read by a monitoring user would be unreadable to them.  With ``open`` the
result has the mode every other file the user creates has.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import IO


def temp_beside(path: Path) -> Path:
    """A fresh, unused name in ``path``'s folder for its temporary file (same filesystem, so the
    final rename is atomic)."""
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")


def open_temp(path: Path) -> tuple[Path, IO[bytes]]:
    """Create ``path``'s temporary file exclusively (the user's umask applies) and open it."""
    tmp = temp_beside(path)
    return tmp, tmp.open("xb")


def write_text(path: Path, text: str, *, durable: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8) all or nothing.  ``durable`` also fsyncs the data
    before the rename, for state a restarted process must find (the reconciler's files)."""
    tmp, f = open_temp(path)
    try:
        with f:
            f.write(text.encode("utf-8"))
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
