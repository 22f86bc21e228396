"""The plan: every fact ``allot plan`` found, as one value that the Markdown and JSON renderers
both read, so the two formats can never disagree."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from allotment.plan.approvals import ApprovalGroup, ApprovalStatus
from allotment.plan.cut_confirmation import DEFAULT_JUDGMENT, Judgment
from allotment.plan.diff import StructuralDiff
from allotment.plan.shares import LeafTotal, ShareRow
from allotment.plan.stats import Interval
from allotment.plan.tree_shares import ClusterTree

FORMAT_VERSION = 2


@dataclass(frozen=True, slots=True)
class Side:
    """One side of the comparison.  ``sha`` is ``None`` for the working tree."""

    label: str  # what the user asked for ("origin/main", "HEAD", "working tree")
    sha: str | None
    inputs_sha256: str
    committed_unix: int | None


@dataclass(frozen=True, slots=True)
class TeamImpact:
    """Projected effect on one team: means over the seeds of the same workloads simulated under
    both configs, over the measured days after the warm-up, every quantity in GPU-hours per week
    of the simulated cluster's own GPUs (one unit: sim/window.py).

    ``entitlement`` is the compiler's (``allot compile``: entitlement_gpus on the cluster x 168 h);
    ``owed`` is what the scheduler owed hour by hour (the entitlement, at most ``max_gpus``, scaled
    by the GPUs in service, capped at the team's demand); ``delivered`` is what it ran charged to
    its budget; ``demand`` its budgeted work running or pending."""

    team: str
    delivered_week_before: float
    delivered_week_after: float
    change: Interval  # paired difference of delivered, after - before, GPU-hours per week
    ratio_before: float | None  # delivered / owed
    ratio_after: float | None
    p90_wait_before_s: float | None
    p90_wait_after_s: float | None
    flagged: bool  # impact_stats: the interval below its judgment's line, and Holm's correction keeps it
    demand_week_before: float = 0.0
    demand_week_after: float = 0.0
    owed_week_before: float = 0.0
    owed_week_after: float = 0.0
    entitlement_week_before: float = 0.0
    entitlement_week_after: float = 0.0
    p_value: float = 1.0  # one-sided, of "no drop beyond the team's line" (plan/stats.p_below)
    # the line the team was judged against and why (plan/cut_confirmation.py): a cut team's flag is
    # tested among the cut teams against zero, any other's against its drop line (plan/holm.py)
    judgment: Judgment = DEFAULT_JUDGMENT

    @property
    def entitlement_cut(self) -> bool:
        """The change lowers the team's entitlement by at least the flag threshold of it."""
        return self.judgment.cut

    @property
    def delivered_delta(self) -> float:
        return self.change.mean

    @property
    def significant(self) -> bool:
        return self.change.excludes_zero


@dataclass(frozen=True, slots=True)
class KindWait:
    """First-start wait of one job kind (the policy's, sim/job_kind.py), seconds: means over the
    seeds of each side's p50 and p90 over the measured days (sim/window.py); None when no
    simulation reported it (a cache entry from before issue 29)."""

    kind: str
    p50_before_s: float | None
    p50_after_s: float | None
    p90_before_s: float | None
    p90_after_s: float | None


@dataclass(frozen=True, slots=True)
class Capacity:
    """The simulated cluster's GPU-hours per week over the measured days, base -> head: what was
    in service, what ran charged to budgets, and what ran as unallocated work; ``absorbed`` is
    the part of a change in GPUs in service that unallocated work took (docs/plan.md)."""

    in_service_before: float
    in_service_after: float
    charged_before: float
    charged_after: float
    unallocated_before: float
    unallocated_after: float
    in_service_change: Interval
    unallocated_change: Interval
    changed: bool = False  # the PR changes the cluster's GPUs or maintenance (not the sim's luck)

    @property
    def absorbed(self) -> float | None:
        """Share of the change in GPUs in service taken up by the change in unallocated work
        (both means); None unless the PR changes capacity (a node failing a little earlier on
        one side is not a capacity change) by at least a GPU-hour a week."""
        d_cap = self.in_service_after - self.in_service_before
        if not self.changed or abs(d_cap) < 1.0:
            return None
        return (self.unallocated_after - self.unallocated_before) / d_cap


@dataclass(frozen=True, slots=True)
class Impact:
    workload: str  # "scenario ai2 on h100" or "trace FILE on h100"
    workload_key: str  # sha256 of what defines the workloads (trace bytes, or scenario recipe)
    cluster: str  # the one cluster simulated
    days: float  # measured per seed, after the warm-up
    seeds: tuple[int, ...]
    teams: tuple[TeamImpact, ...]
    occupancy_before: float | None
    occupancy_after: float | None
    occupancy_change: Interval | None
    flag_threshold: float
    cached_runs: int  # of total_runs (one per side and seed)
    total_runs: int
    note: str = ""  # e.g. why the cache was not used
    latency_profile: str = "none"  # allot plan --profile: the backend's delays (sim/latency.py)
    warmup_days: float = 0.0  # simulated before the measured days, left out of every number
    # the warm-up ran under the base and the head was switched in where measuring starts, as a
    # merge into a running cluster (sim/switch.py); False: each side warmed up on its own
    warmed_under_base: bool = False
    capacity: Capacity | None = None
    family_alpha: float = 0.05  # Holm's family-wise level over the plan's teams (plan/holm.py)
    kind_waits: tuple[KindWait, ...] = ()  # p50/p90 wait per job kind, before -> after


@dataclass(frozen=True, slots=True)
class SkippedImpact:
    """The simulation did not run, and why (shown instead of the estimate)."""

    reason: str


@dataclass(frozen=True, slots=True)
class NewTeam:
    """A node the PR adds, as a reviewer wants to see it."""

    name: str
    parent: str | None
    owners: tuple[str, ...]
    members: tuple[str, ...]
    share: str  # "10 (25.0% of science)"


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
    impact: Impact | SkippedImpact | None  # None: not asked for (--no-simulate)
    approvals: tuple[ApprovalGroup, ...]
    approval_status: tuple[ApprovalStatus, ...] | None  # None when no --approved-by was given
    violations: tuple[str, ...]  # policy rules broken; non-empty means exit 1
    new_teams: tuple[NewTeam, ...] = ()
    trees: tuple[ClusterTree, ...] = ()  # every node's absolute share per cluster (plan report)
    rule_changes: tuple[str, ...] = ()  # judging knobs this PR changes: they apply from the next PR
