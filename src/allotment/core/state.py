"""Mutable records the scheduler keeps between passes (the simulator keeps one scheduler for a
whole run; ``decide`` builds a fresh one from a snapshot).  Not data for other layers: those get
``snapshot`` and ``decisions`` values."""

from __future__ import annotations

from allotment.core.jobs import JobSpec


class Run:
    __slots__ = (
        "allocated",
        "declared",
        "done_before",
        "eligible",
        "est_end",
        "evicted_by",
        "placement",
        "protected_until",
        "spec",
        "start",
    )

    def __init__(
        self,
        spec: JobSpec,
        start: float,
        placement: tuple[tuple[int, int], ...],
        allocated: bool,
        protected_until: float,
        done_before: float,
        declared: int,
        evicted_by: str | None,
    ) -> None:
        self.spec = spec
        self.start = start
        self.placement = placement
        self.allocated = allocated
        self.protected_until = protected_until
        self.done_before = done_before
        self.declared = declared
        self.evicted_by = evicted_by
        self.est_end = start + max(0.0, spec.work - done_before)
        self.eligible = spec.submit


class Pend:
    __slots__ = ("declared", "done_work", "eligible", "evicted_by", "key", "queue", "queued_since", "spec")

    def __init__(
        self,
        spec: JobSpec,
        eligible: float,
        queued_since: float,
        done_work: float,
        declared: int,
        evicted_by: str | None,
        queue: str,
    ) -> None:
        self.spec = spec
        self.eligible = eligible
        self.queued_since = queued_since
        self.done_work = done_work
        self.declared = declared
        self.evicted_by = evicted_by
        self.queue = queue
        self.key: tuple[float, float, str] = (-float(declared), eligible, spec.id)
