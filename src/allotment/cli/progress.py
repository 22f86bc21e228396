"""Progress of the long commands (``simulate``, ``plan``, ``report``, ``replay``) for a person
at a terminal: a bar (or a spinner with the elapsed time, when the work has no count) on stderr,
drawn by ``rich`` and erased when done.

Only on a terminal: nothing when stderr is not a TTY (a pipe, a file, a CI log), when ``CI`` is
set (GitHub Actions, GitLab and most runners set it, and some give a pseudo-terminal), with
``TERM=dumb``, or when stdout carries the machine output (``--json -``) and the caller says so.
Library code never draws: it takes a plain ``(done, total)`` callback (``Progress.update``), so
the bar stays a CLI concern.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress


def wanted(*, machine_stdout: bool = False, stream: TextIO | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether to draw: a person watches ``stream`` (stderr) and nothing asked for quiet."""
    stream = stream if stream is not None else sys.stderr
    env = env if env is not None else os.environ
    if machine_stdout or env.get("CI") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class Progress:
    """``with Progress("simulating 7 days", enabled=wanted()) as p: ... p.update(3, 10)``.
    Without a total it is a spinner with the elapsed time; ``update`` makes it a bar."""

    def __init__(self, label: str, *, enabled: bool, total: int | None = None) -> None:
        self.enabled = enabled
        self._bar: RichProgress | None = None
        self._label, self._total = label, total
        self._task: TaskID | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._bar = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._label, total=self._total)
        return self

    def update(self, done: int, total: int | None = None) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total if total is not None else self._total)

    def runs(self, label: str) -> Callable[[int, int], None]:
        """A ``(done, total)`` callback for library code that names what is counted."""

        def told(done: int, total: int) -> None:
            self.phase(label)
            self.update(done, total)

        return told

    def phase(self, label: str) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=label)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
