"""``--set KEY=VALUE``: override one policy knob for a single run ("what if lookback were 3d?").

Keys are Policy field names; a ``_s`` suffix may be dropped and then the value is a duration
(``lookback=3d`` sets ``lookback_s``).  Bad keys and values are usage errors naming the knob."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from allotment.compile.model import Policy, PriorityWeights
from allotment.durations import parse_duration
from allotment.errors import UsageError

_SIMPLE = {"lookback_s", "min_runtime_cap_s", "default_min_runtime_s", "debug_threshold_s",
           "requeue_resumable", "non_resumable", "unallocated_enabled", "human_drain_threshold_s",
           "reconcile_interval_s", "fairshare_period_s", "reclaim_hysteresis", "queue_depth"}


def apply_overrides(policy: Policy, overrides: Mapping[str, str]) -> Policy:
    changes: dict[str, Any] = {}
    weights: dict[str, Any] = {}
    fields = {f.name for f in dataclasses.fields(Policy)}
    wfields = {f.name for f in dataclasses.fields(PriorityWeights)}
    for key in sorted(overrides):
        value = overrides[key]
        name = key.replace("-", "_")
        if name.startswith("priority_weights.") or name.startswith("weights."):
            w = name.split(".", 1)[1]
            if w not in wfields:
                raise UsageError(f"--set {key}: unknown priority weight; known: {', '.join(sorted(wfields))}")
            weights[w] = _number(key, value, integer=w.endswith("_s"))
            continue
        if name not in fields and f"{name}_s" in fields:
            name = f"{name}_s"
        if name not in _SIMPLE:
            raise UsageError(f"--set {key}: unknown or unsupported knob; known: {', '.join(sorted(_SIMPLE))}")
        if name.endswith("_s"):
            try:
                changes[name] = parse_duration(value)
            except ValueError as exc:
                raise UsageError(f"--set {key}: {exc}") from None
        elif name in ("reclaim_hysteresis", "queue_depth"):
            changes[name] = _number(key, value, integer=name == "queue_depth")
        elif name == "non_resumable":
            if value not in ("requeue", "cancel", "run_to_completion"):
                raise UsageError(f"--set {key}: expected requeue, cancel or run_to_completion")
            changes[name] = value
        else:
            if value.lower() not in ("true", "false", "yes", "no", "1", "0"):
                raise UsageError(f"--set {key}: expected true or false, got {value!r}")
            changes[name] = value.lower() in ("true", "yes", "1")
    if weights:
        changes["priority_weights"] = dataclasses.replace(policy.priority_weights, **weights)
    return policy.with_overrides(**changes) if changes else policy


def _number(key: str, value: str, *, integer: bool) -> float | int:
    try:
        return int(value) if integer and value.isdigit() else parse_duration(value) if integer else float(value)
    except ValueError:
        raise UsageError(f"--set {key}: expected a number, got {value!r}") from None
