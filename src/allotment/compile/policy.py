"""Scheduler knobs from ``policies/`` resolved into ``Policy`` values: the global one and one per
cluster (global values, then that cluster's overrides)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Boost, Policy, PriorityWeights
from allotment.config.models.policy import (
    BoostsFile,
    InteractiveSection,
    PolicyKnobs,
    SchedulerFile,
)
from allotment.config.pool_nodes import pool_names
from allotment.durations import parse_duration

_DURATIONS = {
    "lookback": "lookback_s",
    "min_runtime_cap": "min_runtime_cap_s",
    "default_min_runtime": "default_min_runtime_s",
    "debug_threshold": "debug_threshold_s",
    "reconcile_interval": "reconcile_interval_s",
    "human_drain_threshold": "human_drain_threshold_s",
    "fairshare_period": "fairshare_period_s",
}
_PLAIN = {
    "unallocated": "unallocated_enabled",
    "share_floor": "share_floor",
    "flag_delivered_drop": "flag_delivered_drop",
    "plan_seeds": "plan_seeds",
    "plan_workload": "plan_workload",
    "drift": "drift",
    "prune": "prune",
    "reclaim_hysteresis": "reclaim_hysteresis",
    "queue_depth": "queue_depth",
    "reservations": "reservations",
    "debug_reclaim": "debug_reclaim",
    "consolidate": "consolidate",
    "debug_over_cap": "debug_over_cap",
    "debug_over_cap_admits": "debug_over_cap_admits",
}


def _apply(policy: Policy, knobs: PolicyKnobs) -> Policy:
    changes: dict[str, Any] = {}
    for key, field in _DURATIONS.items():
        value = getattr(knobs, key)
        if value is not None:
            changes[field] = parse_duration(value)
    for key, field in _PLAIN.items():
        value = getattr(knobs, key)
        if value is not None:
            changes[field] = value
    if knobs.preemption is not None:
        if knobs.preemption.requeue_resumable is not None:
            changes["requeue_resumable"] = knobs.preemption.requeue_resumable
        if knobs.preemption.non_resumable is not None:
            changes["non_resumable"] = knobs.preemption.non_resumable
    if knobs.priority_weights is not None:
        pw = knobs.priority_weights
        weights = _given(pw, ("deadline", "fit", "age", "fairness", "declared"))
        if pw.age_cap is not None:
            weights["age_cap_s"] = parse_duration(pw.age_cap)
        base = changes.get("priority_weights", policy.priority_weights)
        changes["priority_weights"] = replace(base, **weights)
    if knobs.interactive is not None:
        changes["interactive"] = _interactive(policy.interactive, knobs.interactive)
    if knobs.within_team is not None:
        wt = knobs.within_team
        within = _given(wt, ("mode", "dependencies", "threshold", "blend", "short_prerequisite"))
        base = changes.get("priority_weights", policy.priority_weights)
        for side in ("below", "above"):
            section = getattr(wt, side)
            if section is not None:
                within[side] = replace(getattr(base, side), **{
                    k: v for k, v in section.model_dump().items() if v is not None
                })
        changes["priority_weights"] = replace(base, **within)
    return policy.with_overrides(**changes) if changes else policy


def _interactive(base: InteractiveClass, k: InteractiveSection) -> InteractiveClass:
    """The section over ``base`` (the global class, for a cluster's override): each key set
    replaces the inherited value, as every other knob does."""
    from dataclasses import replace

    changes: dict[str, Any] = {}
    if k.kinds is not None:
        changes["kinds"] = tuple(k.kinds)
    if k.partitions is not None:
        changes["partitions"] = tuple(k.partitions)
    if k.shape is not None:
        changes["max_gpus"] = k.shape.max_gpus
        changes["max_time_limit_s"] = parse_duration(k.shape.max_time_limit)
    if k.grace is not None:
        changes["grace_s"] = parse_duration(k.grace)
    if k.restore_hook is not None:
        changes["restore_hook"] = k.restore_hook
    if isinstance(k.pool, int):
        changes["pool_nodes"], changes["pool_names"] = k.pool, ()
    elif k.pool is not None:  # a list replaces an inherited count, and the other way round
        changes["pool_nodes"], changes["pool_names"] = 0, pool_names(k.pool)
    return replace(base, **changes)


def resolve_policies(
    scheduler: SchedulerFile, boosts: BoostsFile, clusters: tuple[str, ...]
) -> tuple[Policy, dict[str, Policy]]:
    boost_values = tuple(
        Boost(b.target, b.amount, b.expires, b.reason, b.approver) for b in boosts.boosts
    )
    base = Policy(
        priority_weights=PriorityWeights(),
        boosts=boost_values,
        platform_team=tuple(scheduler.platform_team),
    )
    glob = _apply(base, scheduler)
    per_cluster = {}
    for c in clusters:
        over = scheduler.clusters.get(c)
        per_cluster[c] = _apply(glob, over) if over is not None else glob
    return glob, per_cluster


def _given(section: object, names: tuple[str, ...]) -> dict[str, Any]:
    """The knobs of ``section`` named in ``names`` that the file sets (None: not set)."""
    return {k: v for k in names if (v := getattr(section, k)) is not None}
