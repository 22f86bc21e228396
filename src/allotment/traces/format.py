"""The canonical trace format's vocabulary: field names, versions, and the one line order.

See docs/trace-format.md.  ``reader`` and ``writer`` share these so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from allotment.core.jobs import JobSpec, NodeEvent

FORMAT_VERSION = 1
JOB_FIELDS: tuple[str, ...] = (
    "id",
    "submit",
    "user",
    "account",
    "gpus",
    "gpus_per_node",
    "work",
    "min_runtime",
    "resumable",
    "checkpoint_interval",
    "priority",
    "kind",
    "deadline",
    "depends_on",
    "gpu_type",
)
REQUIRED_JOB_FIELDS = frozenset({"id", "submit", "account", "gpus", "work"})
NODE_FIELDS: tuple[str, ...] = ("type", "time", "node", "state")
HEADER_FIELDS: tuple[str, ...] = (
    "type",
    "version",
    "source",
    "generator",
    "seed",
    "start",
    "cluster",
    "days",
    "note",
)
NODE_STATES = ("unhealthy", "healthy")

TraceItem = JobSpec | NodeEvent


@dataclass(frozen=True, slots=True)
class Trace:
    """A whole trace in memory (see :func:`iter_trace` for streaming)."""

    header: Mapping[str, Any]
    jobs: tuple[JobSpec, ...]
    node_events: tuple[NodeEvent, ...]


def item_time(item: TraceItem) -> float:
    return item.submit if isinstance(item, JobSpec) else item.time


def sort_key(item: TraceItem) -> tuple[float, int, str]:
    """The one total order of trace lines: time, node events before jobs, then id / node name."""
    if isinstance(item, JobSpec):
        return (item.submit, 1, item.id)
    return (item.time, 0, item.node)
