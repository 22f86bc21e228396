"""Opening trace inputs: plain or gzip, decided by the file's magic bytes, not its name.

Everything reads line by line so a file of any size costs the memory of one line.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from allotment.errors import TraceError

_GZIP_MAGIC = b"\x1f\x8b"


def open_text(path: str | Path) -> IO[str]:
    """Open ``path`` for reading text, decompressing gzip transparently."""
    p = Path(path)
    try:
        with p.open("rb") as probe:
            magic = probe.read(2)
        if magic == _GZIP_MAGIC:
            return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8", newline="")
        return p.open("r", encoding="utf-8", newline="")
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from exc


def numbered_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text_without_newline)``, 1-based, streaming."""
    with open_text(path) as fh:
        try:
            for number, raw in enumerate(fh, start=1):
                yield number, raw.rstrip("\r\n")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise TraceError(f"cannot read {path}: {exc}") from exc
