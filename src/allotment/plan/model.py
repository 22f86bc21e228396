"""The plan: every fact ``allot plan`` found, as one value that the Markdown and JSON renderers
both read, so the two formats can never disagree."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from allotment.plan.approvals import ApprovalGroup, ApprovalStatus
from allotment.plan.diff import StructuralDiff
from allotment.plan.shares import LeafTotal, ShareRow

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Side:
    """One side of the comparison.  ``sha`` is ``None`` for the working tree."""

    label: str  # what the user asked for ("origin/main", "HEAD", "working tree")
    sha: str | None
    inputs_sha256: str
    committed_unix: int | None


@dataclass(frozen=True, slots=True)
class TeamImpact:
    """Projected effect on one team of simulating the same workload under both configs."""

    team: str
    delivered_week_before: float  # GPU-hours per week
    delivered_week_after: float
    ratio_before: float | None  # delivered / owed
    ratio_after: float | None
    p90_wait_before_s: float | None
    p90_wait_after_s: float | None
    flagged: bool  # delivered drops by more than the policy's flag_delivered_drop

    @property
    def delivered_delta(self) -> float:
        return self.delivered_week_after - self.delivered_week_before


@dataclass(frozen=True, slots=True)
class Impact:
    workload: str  # "scenario ai2" or "trace FILE"
    workload_key: str  # sha256 of what defines the workload (trace bytes, or scenario recipe)
    days: float
    seed: int
    teams: tuple[TeamImpact, ...]
    occupancy_before: float | None
    occupancy_after: float | None
    debug_p90_before_s: float | None
    debug_p90_after_s: float | None
    flag_threshold: float
    cached: tuple[bool, bool]  # (base, head) came from the cache


@dataclass(frozen=True, slots=True)
class Plan:
    base: Side
    head: Side
    at: dt.date
    author: str  # e-mail of the head commit's author ("" for the working tree)
    headline: str
    diff: StructuralDiff
    shares: tuple[ShareRow, ...]
    totals: tuple[LeafTotal, ...]
    impact: Impact | None
    approvals: tuple[ApprovalGroup, ...]
    approval_status: tuple[ApprovalStatus, ...] | None  # None when no --approved-by was given
    violations: tuple[str, ...]  # policy rules broken; non-empty means exit 1
