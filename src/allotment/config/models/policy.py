"""``policies/scheduler.yaml`` (knobs, per-cluster overrides) and ``policies/boosts.yaml``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, Discriminator, Field, Tag

from allotment.config.models.common import Duration, Name, Owner, Strict, Text
from allotment.config.restore_hook import RESTORE_HOOK_MAX, RESTORE_HOOK_PATTERN


class PreemptionSection(Strict):
    requeue_resumable: bool | None = Field(
        default=None, description="Requeue a preempted job that can resume (default true)."
    )
    non_resumable: Literal["requeue", "cancel", "run_to_completion"] | None = Field(
        default=None, description="What happens to a job that cannot resume (default requeue)."
    )


class PriorityWeightsSection(Strict):
    """Within-team priority signals; only order jobs inside one team."""

    deadline: float | None = Field(default=None, ge=0, description="Weight of deadlines (1).")
    fit: float | None = Field(default=None, ge=0, description="Weight of fitting free GPUs (0.5).")
    age: float | None = Field(default=None, ge=0, description="Weight of time queued (1).")
    fairness: float | None = Field(default=None, ge=0, description="Weight of user fairness (0.5).")
    age_cap: Duration | None = Field(default=None, description="Age stops counting after (1d).")
    declared: float | None = Field(default=None, ge=0, description="Weight of user priority (1).")


# A session pool by count (the cluster's last N nodes by name) or by the nodes it holds.
# One member by the value's shape (a list: nodes; anything else: a count), so a bad value gets one
# error, not one per member; the tags never reach a message (``config.pydantic_errors``).
PoolCount = Annotated[int, Field(ge=0, le=100_000)]
PoolNodes = Annotated[list[Annotated[str, Field(min_length=1, max_length=1000)]], Field(min_length=1, max_length=10_000)]
POOL_TAGS = ("pool-count", "pool-nodes")
Pool = Annotated[
    Annotated[PoolCount, Tag(POOL_TAGS[0])] | Annotated[PoolNodes, Tag(POOL_TAGS[1])],
    Discriminator(lambda v: POOL_TAGS[1] if isinstance(v, list) else POOL_TAGS[0]),
]


class InteractiveShapeSection(Strict):
    """A session by its shape: both bounds hold (docs/design/interactive.md)."""

    max_gpus: int = Field(ge=1, le=4096, description="At most this many GPUs.")
    max_time_limit: Duration = Field(description="And a time limit at most this long.")


class InteractiveSection(Strict):
    """The interactive job class: how a session is recognised (any one test), and the notice it
    gets before it is requeued to make room (docs/design/interactive.md)."""

    kinds: list[Literal["debug", "train", "interactive", "batch", "inference"]] | None = Field(
        default=None, description="Declared kinds that are sessions (default [interactive])."
    )
    partitions: list[Name] | None = Field(
        default=None, description="Slurm partitions / Kueue LocalQueues whose jobs are sessions (none)."
    )
    shape: InteractiveShapeSection | None = Field(default=None, description="Sessions by shape (none).")
    grace: Duration | None = Field(
        default=None, description="Notice before a session past its minimum runtime is requeued (0s)."
    )
    restore_hook: str | None = Field(
        default=None,
        min_length=1,
        max_length=RESTORE_HOOK_MAX,
        pattern=RESTORE_HOOK_PATTERN,
        description="Command name (on the nodes' PATH, no path or arguments) a requeued session "
        "runs first to restore its state (none).",
    )
    pool: Pool | None = Field(
        default=None,
        description="Nodes reserved for sessions, lent to preemptible work while idle: a count N "
        "(the cluster's last N by name) or a list of node names or hostlists (0).",
    )


class WeightSetSection(Strict):
    """One weight set of the adaptive derivation; unset: the Osprey write-up's value."""

    deadline: float | None = Field(default=None, ge=0, description="Weight of deadline urgency.")
    fit: float | None = Field(default=None, ge=0, description="Weight of fitting free GPUs.")
    age: float | None = Field(default=None, ge=0, description="Weight of capped age.")
    fairness: float | None = Field(default=None, ge=0, description="Weight of user fairness.")
    declared: float | None = Field(default=None, ge=0, description="Weight of declared priority (0).")


class WithinTeamSection(Strict):
    """How a team's own jobs are ordered (docs/design/within-team.md)."""

    mode: Literal["fifo", "fixed", "adaptive"] | None = Field(
        default=None, description="fifo, fixed (priority_weights; default) or adaptive."
    )
    dependencies: bool | None = Field(
        default=None, description="Prerequisites inherit their dependants' urgency (true)."
    )
    threshold: float | None = Field(
        default=None, ge=0, le=10, description="Load where the weight sets meet (0.5)."
    )
    blend: float | None = Field(
        default=None, ge=0, le=10, description="Width of the linear blend around it (0.2)."
    )
    short_prerequisite: float | None = Field(
        default=None, ge=0, le=1,
        description="A prerequisite under this fraction of its dependant's work goes first (0.05).",
    )
    below: WeightSetSection | None = Field(default=None, description="Weights under the threshold.")
    above: WeightSetSection | None = Field(default=None, description="Weights over the threshold.")


class PolicyKnobs(Strict):
    """Every knob is optional: unset means the built-in default (global) or the global value
    (per-cluster override)."""

    lookback: Duration | None = Field(default=None, description="Fair-share window (default 7d).")
    min_runtime_cap: Duration | None = Field(default=None, description="Default 8h.")
    default_min_runtime: Duration | None = Field(default=None, description="Default 2h.")
    debug_threshold: Duration | None = Field(default=None, description="Default 15m.")
    preemption: PreemptionSection | None = Field(default=None, description="Preemption rules.")
    unallocated: bool | None = Field(default=None, description="Allow min-runtime-0 jobs.")
    reconcile_interval: Duration | None = Field(default=None, description="Default 10s.")
    human_drain_threshold: Duration | None = Field(
        default=None, description="Drains longer than this need a human (default 4h)."
    )
    priority_weights: PriorityWeightsSection | None = Field(
        default=None, description="Within-team priority signals."
    )
    within_team: WithinTeamSection | None = Field(
        default=None, description="Within-team order: mode, dependencies, adaptive weights."
    )
    fairshare_period: Duration | None = Field(
        default=None, description="Usage, ages and boosts are re-read this often (5m)."
    )
    reclaim_hysteresis: float | None = Field(
        default=None, ge=0, le=10, description="Relative margin a reclaim needs (0.1)."
    )
    queue_depth: int | None = Field(
        default=None, ge=1, le=1024, description="Candidates per team queue visit (8)."
    )
    debug_reclaim: bool | None = Field(
        default=None, description="A debug job may reclaim whatever its team runs now (false)."
    )
    consolidate: bool | None = Field(
        default=None, description="Move resumable work past its protection to free a node for a blocked job (false)."
    )
    debug_over_cap: int | None = Field(
        default=None, ge=0, le=4096,
        description="GPUs a team's short debug jobs may run beyond each max_gpus on its path (0).",
    )
    debug_over_cap_admits: Literal["work", "protection"] | None = Field(
        default=None,
        description="Which debug jobs pass a cap with debug_over_cap: short by their work too (work), "
        "or any debug job, which yields to its team's capped work once past its protection (protection).",
    )
    reservations: int | None = Field(
        default=None, ge=1, le=64, description="Jobs that may hold a reservation at once, on disjoint nodes (1)."
    )
    share_floor: float | None = Field(
        default=None, ge=0, le=1, description="allot plan fails below this leaf share (0)."
    )
    flag_delivered_drop: float | None = Field(
        default=None, ge=0, le=1, description="allot plan flags larger drops (0.05)."
    )
    plan_seeds: int | None = Field(
        default=None, ge=1, le=20, description="allot plan simulates seeds 1..N, paired (5)."
    )
    plan_workload: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9._/-]*$",
        description="allot plan replays this file of the config repo, read from the base "
        "revision, instead of the generated scenario (none): a canonical trace (e.g. an sacct "
        "export converted by allot trace import) or a snapshot of the reconciler's ledger.db.",
    )
    drift: Literal["report", "correct"] | None = Field(
        default=None, description="Reconciler: report or correct drift (correct)."
    )
    prune: bool | None = Field(
        default=None, description="Reconciler: delete Slurm objects not in config (false)."
    )
    interactive: InteractiveSection | None = Field(
        default=None, description="The interactive job class: recognition, grace, restore hook."
    )


class SchedulerFile(PolicyKnobs):
    platform_team: list[Owner] = Field(
        default_factory=list, description="Owners of inventory/ and policies/ (CODEOWNERS)."
    )
    clusters: dict[Name, PolicyKnobs] = Field(
        default_factory=dict, description="Per-cluster overrides of any knob."
    )
    boost_max: Duration | None = Field(
        default=None,
        description="A boost may expire at most this long after the date the config is "
        "checked (7d).",
    )


class BoostEntry(Strict):
    target: str = Field(
        pattern=r"^(job|user|account):[A-Za-z0-9_.-]{1,64}$",
        description="job:ID, user:NAME or account:LEAF.",
    )
    amount: float = Field(gt=0, description="Added to the target's within-team priority.")
    expires: AwareDatetime = Field(description="When the boost stops counting.")
    reason: Text = Field(min_length=1, description="Why; shown by allot explain and audit.")
    approver: Owner = Field(description="Who approved it (e-mail or @handle).")


class BoostsFile(Strict):
    boosts: list[BoostEntry] = Field(default_factory=list)
