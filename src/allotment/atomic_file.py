"""Replacing a file so that no reader ever sees half of it, in one place.

Every output the tool writes (plan comments and reports, traces, event logs, the reconciler's
status and observation files) goes through a temporary file beside its target, renamed over it
only when complete: a crash or a refused write leaves the old file, never a torn one.

The temporary file is a *named file opened exclusively* (``x`` mode), not ``tempfile.mkstemp``:
mkstemp creates files with mode 0600 whatever the user's umask, so a plan comment written for a
CI job or a status file read by a monitoring user would be unreadable to them.  With ``open`` the
result has the mode every other file the user creates has.

A path that is not a regular file -- a device such as ``/dev/null`` or ``/dev/stdout``, a FIFO
-- is written in place: a rename would put a plain file where the device was (``--json
/dev/null`` once left this machine without a ``/dev/null``), and "all or nothing" means nothing
to a stream (a symlink to one, such as ``/dev/stdout``, is followed).  A symlink to a regular
file is replaced itself, never its target: a link planted in an output folder (the plan's cache)
must not redirect a write.

A ``kill -9`` between creating the temporary file and the rename leaves it behind, one per
kill, each as large as what was being written; ``remove_stale_temps`` removes them when the
folder's only writer starts again (the reconciler, under its state-dir lock).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path
from typing import IO

_TOKEN_BYTES = 6
_TEMP_NAME = re.compile(rf"\..+\.[0-9a-f]{{{2 * _TOKEN_BYTES}}}\.tmp")


def temp_beside(path: Path) -> Path:
    """A fresh, unused name in ``path``'s folder for its temporary file (same filesystem, so the
    final rename is atomic)."""
    return path.with_name(f".{path.name}.{secrets.token_hex(_TOKEN_BYTES)}.tmp")


def remove_stale_temps(folder: Path) -> list[Path]:
    """Remove the temporary files interrupted writes left in ``folder`` (its direct entries
    named as ``temp_beside`` names them); return them, sorted.  Only for a folder nobody else is
    writing to at the time: another writer's temporary file would be removed before its rename."""
    try:
        entries = sorted(folder.iterdir())
    except FileNotFoundError:
        return []
    gone = []
    for p in entries:
        if _TEMP_NAME.fullmatch(p.name) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            gone.append(p)
    return gone


def in_place(path: Path) -> bool:
    """Is ``path`` (followed through symlinks) something other than a regular file, which must be
    written in place: a device, a FIFO, a socket?"""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def open_temp(path: Path) -> tuple[Path, IO[bytes]]:
    """Create ``path``'s temporary file exclusively (the user's umask applies) and open it; for
    a path written in place (``in_place``), ``path`` itself.  Finish with ``commit`` or
    ``discard``, never a bare rename or unlink."""
    if in_place(path):
        return path, path.open("wb")
    tmp = temp_beside(path)
    return tmp, tmp.open("xb")


def commit(tmp: Path, path: Path) -> None:
    """Put the complete temporary file ``tmp`` in ``path``'s place."""
    if tmp != path:
        os.replace(tmp, path)


def discard(tmp: Path, path: Path) -> None:
    """Drop an unfinished temporary file; never the target itself (a device written in place)."""
    if tmp != path:
        tmp.unlink(missing_ok=True)


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
        commit(tmp, path)
    except BaseException:
        discard(tmp, path)
        raise
