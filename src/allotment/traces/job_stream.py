"""A workload read lazily: the jobs come from their source one at a time, in submit order.

Why: a trace of a million jobs held as ``JobSpec`` records is over a gigabyte (issue 32, item 5),
and a replay needs each job only from its submission to its end.  What the simulator must know
before the first arrival is small and kept whole: the jobs on a dependency edge (``linked``: a
prerequisite's declared priority is raised by the jobs that wait for it, and a held job waits for
jobs submitted before or after it, ``core.priority.propagate``), the node events (a handful per
node) and the job count (for the progress line).  Dependencies are rare in traces, so memory
follows the jobs alive at once, not the file.

The order is the one ``Workload.of`` gives: by ``(submit, id)``.  A canonical trace is already in
submit order (the reader refuses a line earlier than the one before it, naming both lines), so
only the jobs of one instant are held to be ordered by id (``in_submit_order``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.traces.scenarios.workload import Workload


@dataclass(frozen=True, slots=True)
class JobStream:
    """Jobs to replay, read on demand.  ``jobs()`` starts a fresh pass over them, ordered by
    ``(submit, id)``; ``linked`` holds every job that depends on another or is depended on (the
    only ones the simulator looks up before they arrive); ``node_events`` are sorted by
    ``(time, node, state)``."""

    jobs: Callable[[], Iterator[JobSpec]]
    linked: tuple[JobSpec, ...]
    node_events: tuple[NodeEvent, ...]
    count: int


def linked_jobs(jobs: Iterable[JobSpec]) -> tuple[JobSpec, ...]:
    """The jobs on a dependency edge (either end), in the order given.  Two passes over
    ``jobs``: for a workload already in memory."""
    named = {d for j in jobs for d in j.depends_on}
    return tuple(j for j in jobs if j.depends_on or j.id in named)


def stream_of(workload: Workload) -> JobStream:
    """A workload already in memory (a scenario, ``allot plan``'s runs) as a stream: its jobs in
    the order it holds them."""
    jobs = workload.jobs
    return JobStream(lambda: iter(jobs), linked_jobs(jobs), workload.node_events, len(jobs))


def in_submit_order(jobs: Iterable[JobSpec]) -> Iterator[JobSpec]:
    """Jobs in non-decreasing submit order, reordered by id within one submit time: the order of
    ``Workload.of``, holding only one instant's jobs.  A job earlier than the one before it is a
    ValueError (a canonical trace's reader refuses such a file first, at its line)."""
    group: list[JobSpec] = []
    for j in jobs:
        if group and j.submit != group[0].submit:
            if j.submit < group[0].submit:
                raise ValueError(f"job {j.id!r} submitted at {j.submit:g} s after a job of {group[0].submit:g} s")
            if len(group) > 1:
                group.sort(key=_id)
            yield from group
            group.clear()
        group.append(j)
    if len(group) > 1:
        group.sort(key=_id)
    yield from group


def _id(j: JobSpec) -> str:
    return j.id
