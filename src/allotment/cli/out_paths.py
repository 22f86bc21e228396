"""Before any work: an output that cannot be written is refused at once, named by its flag.

A plan or a 30-day simulation that took minutes must not die on a typo in ``--out`` or a folder
it may not write (and an error found after the work would name a temporary file, not the flag).
``os.access`` is not enough: root passes it on a read-only mount or ``/proc``, so a scratch
file is made and removed where the output will go.  An existing device or pipe
(``/dev/stdout``) is written in place (``atomic_file.in_place``) and not probed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from allotment.atomic_file import in_place
from allotment.errors import UsageError


def check_out_path(out: Path | None, flag: str = "--out", *, folder: bool = False,
                   make_parents: bool = False) -> None:
    """Refuse ``out`` (a file, or with ``folder`` a folder to be made) unless it can be written.
    With ``make_parents`` the missing folders above it are made first (as the command would)."""
    if out is None or str(out) == "-":
        return
    if in_place(out):
        return  # a device or pipe, written in place
    if folder and out.exists() and not out.is_dir():
        raise UsageError(f"{flag} {out}: is a file, not a folder")
    if not folder and out.is_dir():
        raise UsageError(f"{flag} {out}: is a folder")
    parent = out.resolve().parent
    if make_parents:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{flag} {out}: cannot make folder {parent} ({exc.strerror or exc})") from None
    if not parent.is_dir():
        raise UsageError(f"{flag} {out}: folder {parent} does not exist")
    try:
        fd, scratch = tempfile.mkstemp(dir=parent, prefix=".allot-probe-")
    except OSError as exc:
        raise UsageError(f"{flag} {out}: folder {parent} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(scratch)
