"""A session's notice and grace, as the reconciler carries them out and remembers them (issue
29; docs/design/interactive.md).

The rule is the core's (``core.session_grace``): a session the core would stop to make room is
first told (``Decisions.notices``), and stopped only by a pass after its grace.  The reconciler
carries a notice out (``notify``: Slurm sends SIGTERM to its steps and batch shell; Kubernetes
annotates its pods) and remembers it in its state dir (``memory_file``), pinned to the run it
was given to (the run's start), so a restart neither notifies twice nor cuts a grace short, and
a session requeued and started again gets a fresh one.  It gives the core each notice back in
the snapshot (``RunningJob.noticed_at``), the same state the simulator's core keeps itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from allotment.backends.actions import start_key
from allotment.backends.protocol import Observation


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice given to one run of a job: its start key and when (Unix seconds)."""

    run: str
    at: float


def noticed_at(noticed: Mapping[str, Notice], job_id: str, run: str) -> float | None:
    """When this run of the job was told (None: not this run)."""
    given = noticed.get(job_id)
    return given.at if given is not None and given.run == run else None


def in_grace(obs: Observation, noticed: Mapping[str, Notice], grace_s: float) -> list[str]:
    """Lines for the plan's skipped list: the running sessions told, with the grace left."""
    out = []
    for j in obs.jobs:
        if j.state != "running" or j.start is None:
            continue
        at = noticed_at(noticed, j.id, start_key(j.start))
        if at is not None and (left := at + grace_s - obs.at) > 0:
            out.append(f"{j.id}: session in its grace, {left:.0f}s left")
    return out
