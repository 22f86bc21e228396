"""Where a replay takes its jobs from, one at a time in ``(submit, id)`` order: a ``JobSource``.

Why: a trace of a million jobs held as ``JobSpec`` records is over a gigabyte (issue 32, item 5),
and a replay needs each job only from its submission to its end.  What the simulator must know
before the first arrival is small and kept whole: the jobs on a dependency edge (``linked``: a
prerequisite's declared priority is raised by the jobs that wait for it, and a held job waits for
jobs submitted before or after it, ``core.priority.propagate``), the node events (a handful per
node) and the job count (for the progress line).  Dependencies are rare in traces, so memory
follows the jobs alive at once, not the file.

A source has a position, and ``fork`` gives an independent source at the same position: a run
paused and copied (``sim/switch.py``) continues each copy from where the run stood, without
either holding the whole workload.  Two kinds: ``ListJobs`` over a workload already in memory
(scenarios, ``allot plan``'s runs: an index into its tuple) and ``traces.trace_stream.FileJobs``
over a checked trace file (a byte offset, the file opened again by each fork).

The order is the one ``Workload.of`` gives: by ``(submit, id)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.traces.scenarios.workload import Workload


class JobSource(Protocol):
    """Jobs to replay, handed out one at a time in ``(submit, id)`` order.

    ``linked`` holds every job on a dependency edge (the only ones the simulator looks up before
    they arrive), in that order too; ``node_events`` are sorted by ``(time, node, state)``;
    ``count`` is how many jobs the whole source holds (from its start, wherever it stands)."""

    @property
    def linked(self) -> tuple[JobSpec, ...]: ...
    @property
    def node_events(self) -> tuple[NodeEvent, ...]: ...
    @property
    def count(self) -> int: ...

    def next_job(self) -> JobSpec | None:
        """The next job, and the position moves past it; None once every job was handed out."""

    def fork(self) -> JobSource:
        """An independent source at this position: what it hands out next is what this would."""

    def rewound(self) -> JobSource:
        """An independent source at the first job (to read the whole workload again)."""


def every_job(source: JobSource) -> Iterator[JobSpec]:
    """The jobs of ``source`` from its first, without moving ``source``."""
    s = source.rewound()
    while (j := s.next_job()) is not None:
        yield j


def linked_jobs(jobs: Iterable[JobSpec]) -> tuple[JobSpec, ...]:
    """The jobs on a dependency edge (either end), in the order given.  Two passes over
    ``jobs``: for a workload already in memory."""
    named = {d for j in jobs for d in j.depends_on}
    return tuple(j for j in jobs if j.depends_on or j.id in named)


class ListJobs:
    """A workload already in memory as a source: its jobs in the order it holds them (a
    ``Workload``'s, ``(submit, id)``), the position an index.  A fork shares the tuple."""

    __slots__ = ("_jobs", "_pos", "count", "linked", "node_events")

    def __init__(self, jobs: tuple[JobSpec, ...], node_events: tuple[NodeEvent, ...] = (), *,
                 linked: tuple[JobSpec, ...] | None = None, pos: int = 0) -> None:
        self._jobs = jobs
        self._pos = pos
        self.count = len(jobs)
        self.linked = linked_jobs(jobs) if linked is None else linked
        self.node_events = node_events

    def next_job(self) -> JobSpec | None:
        i = self._pos
        if i >= self.count:
            return None
        self._pos = i + 1
        return self._jobs[i]

    def fork(self) -> ListJobs:
        return ListJobs(self._jobs, self.node_events, linked=self.linked, pos=self._pos)

    def rewound(self) -> ListJobs:
        return ListJobs(self._jobs, self.node_events, linked=self.linked)


class TakenJobs:
    """A workload in memory handed to one run, which lets each job go as it hands it out.

    Why: a ``ListJobs`` keeps every job of the workload to the end of the run, so a scenario
    run held all of them where a streamed trace holds a job from its arrival to its end; the
    jobs on no dependency edge (``ai2``'s debug work, half its jobs: 33 MiB at 90 days) were
    kept for nobody (issue 27 item 4).  For a run whose workload nothing reads again (``allot
    simulate`` without ``--save``).  A fork copies the references still to come (a paused run's
    copy, ``sim/switch.py``); a rewind is refused: the jobs handed out are gone."""

    __slots__ = ("_jobs", "_pos", "count", "linked", "node_events")

    def __init__(self, jobs: list[JobSpec | None], node_events: tuple[NodeEvent, ...] = (), *,
                 linked: tuple[JobSpec, ...], count: int) -> None:
        self._jobs = jobs  # this source's own list: a slot is emptied as its job is handed out
        self._pos = 0
        self.count = count
        self.linked = linked
        self.node_events = node_events

    @staticmethod
    def of(workload: Workload) -> TakenJobs:
        """``workload``'s jobs, to be let go one by one (the caller drops ``workload``)."""
        jobs = workload.jobs
        return TakenJobs(list(jobs), workload.node_events, linked=linked_jobs(jobs), count=len(jobs))

    def next_job(self) -> JobSpec | None:
        i = self._pos
        jobs = self._jobs
        if i >= len(jobs):
            return None
        j = jobs[i]
        jobs[i] = None
        self._pos = i + 1
        return j

    def fork(self) -> TakenJobs:
        return TakenJobs(self._jobs[self._pos:], self.node_events, linked=self.linked, count=self.count)

    def rewound(self) -> TakenJobs:
        raise RuntimeError("a TakenJobs lets its jobs go as it hands them out: it cannot be read again")


def job_source(workload: Workload | JobSource) -> JobSource:
    """``workload`` as a source at its first job (a source is taken as it stands)."""
    if isinstance(workload, Workload):
        return ListJobs(workload.jobs, workload.node_events)
    return workload
