"""The executor interface: run independent tasks, hand back each result as it ends.

Kept to one method, like httpx's transport: an executor knows nothing of plans, seeds or
configs.  A task is a module-level function applied to one picklable argument, named by a
content-addressed ``key`` (the sha256 of what determines its result), so an executor that runs
it elsewhere can name the output by it and never mix two runs up.  The function's result must be
JSON (dicts, lists, strings, finite numbers): that is what crosses a shared folder unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ExecTask:
    """One independent piece of work: ``fn(arg)``, named by ``key``; ``label`` is for errors."""

    key: str
    arg: Any
    label: str


class Executor(Protocol):
    """Runs ``fn`` on every task; yields ``(index into tasks, result)`` as each ends, in any
    order.  ``parallelism`` is how many cores' worth of tasks it runs at once (how work is best
    grouped); it may start more tasks than that and share its cores between them
    (``local.processes``)."""

    @property
    def parallelism(self) -> int: ...

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[ExecTask]) -> Iterator[tuple[int, Any]]: ...
