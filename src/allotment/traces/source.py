"""Opening trace inputs: plain or gzip, decided by the file's magic bytes, not its name.

Everything reads line by line so a file of any size costs the memory of one line.  Lines are
decoded one at a time, so a byte that is not UTF-8 is reported at its line and column (and the
line read on with a replacement character, so the other errors still come out); a corrupt or
truncated gzip stream is reported at the first line it could not give (gzip decompresses in
blocks, so that is where the bad block starts, to within a block), never as a ``zlib.error``.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path

from allotment.errors import TraceError
from allotment.traces.diagnostics import DiagnosticCollector

_GZIP_MAGIC = b"\x1f\x8b"


class TextLines:
    """The decoded lines of ``path`` (line ends kept, as a text file with ``newline=""``).

    Problems go to ``diags`` when given (the caller raises them with its own), else the first
    is raised at once as a positioned ``TraceDiagnostics``.  Use as a context manager.
    """

    def __init__(self, path: str | Path, diags: DiagnosticCollector | None = None) -> None:
        self.path = Path(path)
        self.diags = diags if diags is not None else DiagnosticCollector(str(path))
        self._raise_now = diags is None
        self._fh = open_binary(self.path)
        self.line = 0

    def __enter__(self) -> TextLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def close(self) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[str]:
        for _, text in self.numbered(strip=False):
            yield text

    def numbered(self, *, strip: bool = True) -> Iterator[tuple[int, str]]:
        """``(line number, text)``, 1-based; ``strip`` drops the line end.  One loop for both,
        as this is the hot loop of every reader."""
        try:
            for raw in self._fh:
                self.line += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    col = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                    self._report(self.line, col, f"byte 0x{raw[exc.start]:02x} is not UTF-8")
                    text = raw.decode("utf-8", "replace")
                yield self.line, text.rstrip("\r\n") if strip else text
        except (OSError, EOFError, zlib.error) as exc:
            # gzip.BadGzipFile is an OSError; a cut stream an EOFError; bad data a zlib.error.
            # Nothing after this can be read: raise what was found so far, now.
            self.diags.add(
                self.line + 1, 1, f"cannot read this line: {exc} (a corrupt or cut file?)"
            )
            self.diags.raise_if_any()

    def _report(self, line: int, col: int, message: str) -> None:
        self.diags.add(line, col, message)
        if self._raise_now:
            self.diags.raise_if_any()


def open_binary(p: Path) -> io.BufferedIOBase:
    """``p`` as bytes, decompressed when it is gzip (also what a streamed replay re-reads)."""
    try:
        with p.open("rb") as probe:
            magic = probe.read(2)
        if magic == _GZIP_MAGIC:
            return gzip.open(p, "rb")
        return p.open("rb")
    except OSError as exc:
        raise TraceError(f"cannot read {p}: {exc.strerror or exc}") from exc


def open_text(path: str | Path, diags: DiagnosticCollector | None = None) -> TextLines:
    """Open ``path`` for reading text lines, decompressing gzip transparently."""
    return TextLines(path, diags)


def numbered_lines(
    path: str | Path, diags: DiagnosticCollector | None = None
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text_without_newline)``, 1-based, streaming."""
    with open_text(path, diags) as lines:
        yield from lines.numbered()
