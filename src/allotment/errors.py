"""One error hierarchy for the whole project.

Only the CLI catches these and turns them into exit codes; library code raises and never prints::

    AllotmentError
     ├── ConfigError      bad configuration; carries every Diagnostic at once     exit 2
     ├── CompileError     a valid-looking config that cannot be compiled           exit 2
     ├── TraceError       a trace file that cannot be read                         exit 2
     ├── UsageError       bad command-line arguments                               exit 2
     ├── PolicyViolation  a check failed (plan rule, audit, codeowners --check)    exit 1
     ├── BackendError     the cluster backend failed or timed out                  exit 3
     └── ReconcileError   the reconciler's own state dir cannot be used             exit 3
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from allotment.neutral import neutral

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """One finding about an input file, positioned so an editor can jump to it.

    ``line`` and ``col`` are 1-based; 0 means "the whole file".  ``file`` is relative to the
    config repository root so the same message reads the same in CI and on a laptop.
    """

    file: str
    line: int
    col: int
    message: str
    severity: Severity = "error"

    def format(self) -> str:
        """One line, inert in a CI log: the file name and message may come from a PR."""
        prefix = "warning: " if self.severity == "warning" else ""
        return neutral(f"{self.file}:{self.line}:{self.col}: {prefix}{self.message}")


class AllotmentError(Exception):
    """Base of every error allotment raises on purpose."""

    exit_code = 2


class ConfigError(AllotmentError):
    """The configuration is invalid; ``diagnostics`` holds every problem found, sorted."""

    exit_code = 2

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(sorted(set(diagnostics)))
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @property
    def errors(self) -> Sequence[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


class CompileError(AllotmentError):
    exit_code = 2


class TraceError(AllotmentError):
    exit_code = 2


class UsageError(AllotmentError):
    exit_code = 2


class PolicyViolation(AllotmentError):
    exit_code = 1


class BackendError(AllotmentError):
    exit_code = 3


class ReconcileError(AllotmentError):
    exit_code = 3
