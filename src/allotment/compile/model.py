"""The compiled configuration: the one typed value every later layer reads.

The config layer (pydantic models of the YAML files) is turned by ``allotment.compile`` into these
frozen dataclasses.  Nothing downstream ever sees YAML or pydantic; nothing here does I/O.

Quantities that mean different things carry different names: ``share`` is a fraction among
siblings, ``absolute`` a fraction of a whole cluster, ``entitlement_gpus`` a number of GPUs and
``entitlement_gpu_hours`` reference GPU-hours per lookback window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from allotment.compile.interactive import InteractiveClass
from allotment.errors import Diagnostic

NonResumableRule = Literal["requeue", "cancel", "run_to_completion"]
DriftRule = Literal["report", "correct"]


@dataclass(frozen=True, slots=True)
class GpuType:
    name: str
    billing_weight: float  # reference GPU-hours charged for one hour of this type


@dataclass(frozen=True, slots=True)
class NodeGroup:
    name: str
    gpu_type: str
    gpus_per_node: int
    node_names: tuple[str, ...]  # expanded, stable order


@dataclass(frozen=True, slots=True)
class Maintenance:
    nodes: tuple[str, ...]
    start: dt.datetime
    end: dt.datetime
    reason: str


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    node_groups: tuple[NodeGroup, ...]
    maintenance: tuple[Maintenance, ...]
    gpus: int  # installed GPUs
    reference_gpu_hours_per_window: float  # gpus x billing weight x lookback hours
    health_file: str | None = None  # where the reconciler reads node health (one "node state" a line)
    health_command: str | None = None  # or a command printing the same; run by the platform team's reconciler only

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n for g in self.node_groups for n in g.node_names)


WithinTeamMode = Literal["fifo", "fixed", "adaptive"]


@dataclass(frozen=True, slots=True)
class WeightSet:
    """One set of the adaptive derivation's weights (``within_team.below`` / ``.above``); the
    defaults are the Osprey write-up's table for a loaded cluster (docs/design/within-team.md).
    The write-up's table has no declared-priority term, hence ``declared`` 0."""

    deadline: float = 0.2
    fit: float = 0.5
    age: float = 0.1
    fairness: float = 0.2
    declared: float = 0.0


#: the write-up's weights below its utilization threshold: urgency dominates
BELOW = WeightSet(deadline=0.5, fit=0.2, age=0.2, fairness=0.1, declared=0.0)


@dataclass(frozen=True, slots=True)
class PriorityWeights:
    """Within-team priority signals (see core.priority).  ``mode`` chooses the derivation:
    ``fixed`` (these weights, fit's growing with load; the default, today's order), ``adaptive``
    (the two weight sets blended by load, every factor in [0, 1]) or ``fifo`` (oldest eligible
    first; boosts still count).  ``dependencies``: prerequisites inherit their dependants'
    urgency (off: each job is scored alone)."""

    deadline: float = 1.0
    fit: float = 0.5
    age: float = 1.0
    fairness: float = 0.5
    age_cap_s: int = 86400
    declared: float = 1.0  # the user's own declared priority
    mode: WithinTeamMode = "fixed"
    dependencies: bool = True
    below: WeightSet = BELOW
    above: WeightSet = WeightSet()
    threshold: float = 0.5  # load (demanded / installed GPUs) where the sets meet
    blend: float = 0.2  # width of the linear blend around ``threshold`` (0: a step)
    short_prerequisite: float = 0.05  # a prerequisite this short next to its dependant goes first


@dataclass(frozen=True, slots=True)
class Boost:
    """A manual, expiring, audited bump of one job, user or account's within-team priority."""

    target: str  # "job:ID", "user:NAME" or "account:NAME"
    amount: float
    expires: dt.datetime
    reason: str
    approver: str


@dataclass(frozen=True, slots=True)
class Policy:
    """Scheduler knobs, already resolved for one cluster (global policy + that cluster's overrides)."""

    lookback_s: int = 7 * 86400
    min_runtime_cap_s: int = 8 * 3600
    default_min_runtime_s: int = 2 * 3600  # when a job declares none
    debug_threshold_s: int = 15 * 60
    requeue_resumable: bool = True
    non_resumable: NonResumableRule = "requeue"
    unallocated_enabled: bool = True
    reconcile_interval_s: int = 10
    human_drain_threshold_s: int = 4 * 3600
    # scheduling pass (core): how often time-varying inputs (window usage, ages, deadlines,
    # boosts) are re-read -- a pure quantization of time, see core/epoch.py
    fairshare_period_s: int = 300
    reclaim_hysteresis: float = 0.1  # a reclaim needs the victim's measure this much (relative) higher
    queue_depth: int = 8  # candidates one visit of a team's queue examines, by declared priority and age
    reservations: int = 1  # jobs that may hold a reservation at once, on disjoint nodes (core/reservation.py)
    # a reservation kept by its holder across rounds and passes while its queue stays tier 0:
    # "off" (decided afresh each round), "all" holders, or "gangs" only (core/reservation.py, KeptHolds)
    keep_hold: str = "off"
    # ... only for holders asking at least this fraction of the cluster's GPUs (0: every holder it keeps)
    keep_hold_min_fraction: float = 0.0
    # while a hold is kept, a debug job may backfill its nodes if its protection ends by the hold's
    # first planned start plus debug_threshold_s (read only with keep_hold on)
    kept_hold_debug: bool = True
    # the hand-over of a reservation from its last holder (with keep_hold off): "off" (decided afresh
    # each round), "sooner" (the last holder keeps it unless the new one starts no later), "claim" (a
    # holder it passed from keeps a hold of its own after the others), "both" (core/hand_over.py;
    # simulation only, a --set knob)
    hand_over: str = "off"
    # resumable allocated work yields to a reservation once its protection ends: a hold is planned
    # by the protection ends on its nodes and a tier-0 holder evicts what is past them; "off", "all"
    # such work, "borrowed": only work that took its team above what it is owed when it started,
    # or "gangs": only such a gang
    # (core/reservation.py, ``evicts_for_hold``; simulation only, a --set knob)
    hold_evicts: str = "off"
    # victim choice counts a gang's later drain: "off"; "class": among ways to free room that need
    # the same worst victim class, break no running gang larger than the requester first; "first":
    # an option breaking a larger allocated gang after every other; "wait": "first", and no such gang
    # taken before the requester is starving (core/preemption/gang_sparing.py; simulation only, a --set knob)
    spare_gangs: str = "off"
    debug_reclaim: bool = False  # a debug job may reclaim whatever its team runs now (core/preemption/terms.py)
    # GPUs a team's short debug jobs (by protection and work) may run beyond each max_gpus on
    # its path, while its other work keeps under it (core/debug_overdraft.py; 0: none)
    debug_over_cap: int = 0
    # which debug jobs pass a cap with debug_over_cap: "work" (short by their remaining work too),
    # or "protection" (any debug job; once past its protection it yields to its team's work the
    # cap holds, while its team is beyond a cap: core/debug_overdraft.py)
    debug_over_cap_admits: str = "work"
    consolidate: bool = False  # move resumable work past its protection to free a node (core/consolidation.py)
    priority_weights: PriorityWeights = field(default_factory=PriorityWeights)
    boosts: tuple[Boost, ...] = ()
    # the interactive job class: how a session is recognised, its grace and restore hook
    # (compile/interactive.py; read by the metrics and the backends, not by the core)
    interactive: InteractiveClass = field(default_factory=InteractiveClass)
    # pull-request checks
    share_floor: float = 0.0  # minimum absolute share of any funded leaf; below it, plan exits 1
    flag_delivered_drop: float = 0.05  # flag teams whose projected delivered hours drop more than this
    plan_seeds: int = 5  # allot plan simulates both sides on the workloads of seeds 1..plan_seeds
    plan_workload: str | None = None  # a trace file of the config repo allot plan replays (docs/plan.md)
    # reconciler
    drift: DriftRule = "correct"
    prune: bool = False
    platform_team: tuple[str, ...] = ()

    def with_overrides(self, **changes: Any) -> Policy:
        from dataclasses import replace

        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class BudgetNode:
    """One node of the budget tree after compilation at a given date.

    ``share`` is normalized among active siblings (sums to 1).  ``absolute[c]`` is the product of
    shares along the path restricted to the nodes eligible for cluster ``c`` (0 for ineligible or
    inactive nodes).
    """

    name: str
    path: str  # "org/program/team"
    parent: str | None
    owners: tuple[str, ...]
    leaf: bool
    weight: float  # raw share as written
    share: float  # normalized among active siblings
    active: bool  # inside its validity dates at the compile date
    clusters: tuple[str, ...]  # clusters it may use (inherited restrictions applied)
    max_gpus: int | None
    members: tuple[str, ...]
    absolute: Mapping[str, float]
    entitlement_gpus: Mapping[str, float]
    entitlement_gpu_hours: Mapping[str, float]
    source: str  # repo-relative file that defines this node (its owners own that file)
    start: dt.date | None = None
    end: dt.date | None = None


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    accounts: tuple[str, ...]  # leaves the user is a member of
    default_account: str


@dataclass(frozen=True, slots=True)
class CompiledConfig:
    inputs_sha256: str  # hash of every input file's bytes and path: what a plan comment names
    revision: str | None  # git commit, when compiled from one
    at: dt.date  # compile date (validity windows evaluated here)
    clusters: Mapping[str, Cluster]
    gpu_types: Mapping[str, GpuType]
    nodes: tuple[BudgetNode, ...]  # pre-order, siblings by name
    users: Mapping[str, UserInfo]
    policy: Policy  # global
    cluster_policies: Mapping[str, Policy]  # resolved per cluster
    root: str
    warnings: tuple[Diagnostic, ...] = ()  # loader and compile warnings, sorted (added by issue 2)

    def node(self, name: str) -> BudgetNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def leaves(self) -> tuple[BudgetNode, ...]:
        return tuple(n for n in self.nodes if n.leaf)

    def children(self, name: str) -> tuple[BudgetNode, ...]:
        return tuple(n for n in self.nodes if n.parent == name)

    def policy_for(self, cluster: str) -> Policy:
        return self.cluster_policies.get(cluster, self.policy)

    def largest_cluster(self) -> str:
        return max(self.clusters.values(), key=lambda c: (c.gpus, c.name)).name
