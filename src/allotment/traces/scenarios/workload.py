"""A workload: what a simulation replays.  Built by a scenario generator or read from a trace.

Kept separate from the trace reader so scenario generators, the simulator and ``allot plan`` share
one plain value and never depend on file formats.
"""

from __future__ import annotations

from dataclasses import dataclass

from allotment.core.jobs import JobSpec, NodeEvent


@dataclass(frozen=True, slots=True)
class Workload:
    """Jobs sorted by (submit, id) and node health events sorted by (time, node)."""

    jobs: tuple[JobSpec, ...]
    node_events: tuple[NodeEvent, ...] = ()

    @staticmethod
    def of(
        jobs: list[JobSpec] | tuple[JobSpec, ...],
        node_events: list[NodeEvent] | tuple[NodeEvent, ...] = (),
    ) -> Workload:
        """Build a workload in canonical order, whatever order the inputs came in."""
        return Workload(
            jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))),
            node_events=tuple(sorted(node_events, key=lambda e: (e.time, e.node, e.state))),
        )
