"""Collecting every problem in a trace file before giving up.

A trace with one bad line usually has many; a user fixing them one run at a time would hate us.
So readers and importers add findings to a :class:`DiagnosticCollector` and raise once, at the
end (or as soon as the cap is reached, since a wholly wrong file would otherwise print a million
lines).

:class:`TraceDiagnostics` is both a ``ConfigError`` (so the CLI prints one ``file:line:col:
message`` per finding, exit 2) and a ``TraceError`` (so callers that only care about traces can
catch that).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allotment.errors import ConfigError, Diagnostic, TraceError

DEFAULT_ERROR_CAP = 100


class TraceDiagnostics(ConfigError, TraceError):
    """A trace file has errors; ``diagnostics`` holds each with its line and column."""

    exit_code = 2


class TooManyErrors(Exception):
    """Internal signal: the cap was reached, stop reading."""


@dataclass(slots=True)
class DiagnosticCollector:
    """Accumulates diagnostics for one file, up to ``cap`` errors."""

    file: str
    cap: int = DEFAULT_ERROR_CAP
    items: list[Diagnostic] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, col: int, message: str) -> None:
        """Record an error; raises :class:`TooManyErrors` once the cap is exceeded."""
        self.total += 1
        if self.total > self.cap:
            raise TooManyErrors
        self.items.append(Diagnostic(self.file, line, col, message))

    def __bool__(self) -> bool:
        return self.total > 0

    def raise_if_any(self, *, stopped_early: bool = False) -> None:
        """Raise :class:`TraceDiagnostics` with everything found, if anything was."""
        if not self.total:
            return
        items = list(self.items)
        if stopped_early or self.total > self.cap:
            items.append(
                Diagnostic(self.file, 0, 0, f"stopped after {self.cap} errors; fix these first")
            )
        raise TraceDiagnostics(items)
