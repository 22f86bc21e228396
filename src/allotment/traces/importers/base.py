"""What every importer produces: ``RawJob`` records plus counted skips and positioned errors.

An importer knows its source format and nothing else: it does not sort, rename, fill unknown
fields or write anything.  The pipeline (``allotment.traces.pipeline``) does those the same way
for every format, which is what keeps four importers small and alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from allotment.traces.diagnostics import DiagnosticCollector


@dataclass(frozen=True, slots=True)
class RawJob:
    """One job as the source describes it.  ``None`` means the source does not say.

    ``submit`` is in the source's own time base (seconds; absolute epoch seconds for sacct and
    absolute CSV timestamps); the pipeline rebases every trace to start at 0.  ``klass`` is the
    source's coarse job class (SWF queue, Alibaba QoS, Slurm QOS) for fill rules to match on.
    """

    submit: float
    id: str
    account: str
    gpus: int
    work: float
    user: str = ""
    gpus_per_node: int | None = None
    gpu_type: str | None = None
    klass: str | None = None
    kind: str | None = None
    min_runtime: float | None = None
    resumable: bool | None = None
    checkpoint_interval: float | None = None
    priority: int = 0
    line: int = 0  # where the source describes it, for errors found later (duplicate ids)

    def __reduce__(self) -> tuple[type[RawJob], tuple[object, ...]]:
        # Pickled by the external sort: positional values are several times faster than the
        # generic slots-dataclass state protocol.
        return (
            RawJob,
            (
                self.submit, self.id, self.account, self.gpus, self.work, self.user,
                self.gpus_per_node, self.gpu_type, self.klass, self.kind, self.min_runtime,
                self.resumable, self.checkpoint_interval, self.priority, self.line,
            ),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class NodeGroupShape:
    """A group of identical nodes found in the source (a node list or a machine header)."""

    gpu_type: str
    gpus_per_node: int
    count: int


@dataclass(slots=True)
class ImportContext:
    """What an importer reports besides jobs: errors, skips by reason and facts it learned."""

    diags: DiagnosticCollector
    skipped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)  # kept, but adjusted (e.g. rounded up)
    records: int = 0
    cluster: tuple[NodeGroupShape, ...] = ()
    cluster_source: str = ""
    start_iso: str | None = None  # absolute time of the source's time 0, when known

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def note(self, what: str) -> None:
        self.notes[what] += 1

    def refuse(self, line: int, problem: str | None, col: Callable[[], int] | int = 1) -> bool:
        """Report ``problem`` (from ``traces.bounds``) at ``line:col``; True if there was one.

        ``col`` may be a function, called only when there is a problem: finding a field's
        column costs more than the check, on every line."""
        if problem is None:
            return False
        self.diags.add(line, col if isinstance(col, int) else col(), problem)
        return True


class Importer(Protocol):
    """One source format.  ``read`` streams; it must not hold the file in memory."""

    @property
    def name(self) -> str: ...

    def read(self, path: Path, ctx: ImportContext) -> Iterator[RawJob]: ...
