"""``--set KEY=VALUE``: override one policy knob for a single run ("what if lookback were 3d?").

Keys are the names written in ``policies/scheduler.yaml`` (docs/config-reference.md), never
the compiled model's field names: ``lookback=3d``, ``preemption.non_resumable=cancel``,
``priority_weights.age=2``.  The preemption knobs may drop their ``preemption.`` prefix.  Bad
keys and values are usage errors naming the knob as the user wrote it and listing the public
names (``KNOBS``)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from allotment.compile.model import Policy
from allotment.config.pool_nodes import pool_names, pool_problems
from allotment.config.restore_hook import RESTORE_HOOK_MAX, RESTORE_HOOK_PATTERN
from allotment.durations import parse_duration
from allotment.errors import UsageError


def _duration(value: str) -> int:
    return int(parse_duration(value))


def _bool(value: str) -> bool:
    v = value.lower()
    if v not in ("true", "false", "yes", "no", "1", "0"):
        raise ValueError(f"expected true or false, got {value!r}")
    return v in ("true", "yes", "1")


def _non_resumable(value: str) -> str:
    if value not in ("requeue", "cancel", "run_to_completion"):
        raise ValueError(f"expected requeue, cancel or run_to_completion, got {value!r}")
    return value


def _weight(value: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"expected a number, got {value!r}") from None
    if not v >= 0 or v == float("inf"):
        raise ValueError(f"expected a number 0 or more, got {value!r}")
    return v


def _count(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"expected a whole number 1 or more, got {value!r}")
    return int(value)


def _gpus(value: str) -> int:
    if not value.isdigit() or int(value) > 4096:
        raise ValueError(f"expected a whole number of GPUs 0 to 4096, got {value!r}")
    return int(value)


def _pool(value: str) -> dict[str, Any]:
    """A count of nodes, or node names and hostlists (``n7,n8`` or ``h100-[15-16]``): the
    interactive class's two pool fields, the one given set and the other cleared (as in the file,
    ``compile.policy``).  The names are checked against the cluster where it is known
    (``sim.runner``, ``config.pool_nodes``)."""
    if value.isdigit():
        return {"pool_nodes": int(value), "pool_names": ()}
    if not value or value[0].isdigit() or value.startswith("-"):
        raise ValueError(f"expected a whole number of nodes, 0 or more, or node names, got {value!r}")
    return {"pool_nodes": 0, "pool_names": pool_names([value])}


def _hook(value: str) -> str | None:
    if value.lower() == "none":
        return None
    if len(value) > RESTORE_HOOK_MAX or not re.match(RESTORE_HOOK_PATTERN, value):
        raise ValueError(f"expected a command name (letters, digits, '.', '-', '_') or none, got {value!r}")
    return value


def _keep_hold(value: str) -> str:
    if value not in ("off", "all", "gangs"):
        raise ValueError(f"expected off, all or gangs, got {value!r}")
    return value


def _hand_over(value: str) -> str:
    if value not in ("off", "sooner", "claim", "both", "claim-over"):
        raise ValueError(f"expected off, sooner, claim, both or claim-over, got {value!r}")
    return value


def _hold_evicts(value: str) -> str:
    if value not in ("off", "gangs", "borrowed", "all"):
        raise ValueError(f"expected off, gangs, borrowed or all, got {value!r}")
    return value


def _spare_gangs(value: str) -> str:
    if value not in ("off", "class", "first", "wait"):
        raise ValueError(f"expected off, class, first or wait, got {value!r}")
    return value


def _over_cap_admits(value: str) -> str:
    if value not in ("work", "protection"):
        raise ValueError(f"expected work or protection, got {value!r}")
    return value


def _fraction(value: str) -> float:
    """A fraction from 0 to 1, as a decimal (``0.125``) or a ratio of whole numbers (``1/8``)."""
    num, slash, den = value.partition("/")
    try:
        v = int(num) / int(den) if slash else float(value)
    except (ValueError, ZeroDivisionError):
        v = math.nan
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"expected a fraction from 0 to 1 (0.125 or 1/8), got {value!r}")
    return v


def _mode(value: str) -> str:
    if value not in ("fifo", "fixed", "adaptive"):
        raise ValueError(f"expected fifo, fixed or adaptive, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Knob:
    """A public ``--set`` name: the Policy (or PriorityWeights) field it sets, and its parser."""

    field: str
    parse: Callable[[str], Any]
    weight: bool = False  # a field of Policy.priority_weights
    interactive: bool = False  # a field of Policy.interactive (compile.interactive)


KNOBS: dict[str, Knob] = {
    "lookback": Knob("lookback_s", _duration),
    "min_runtime_cap": Knob("min_runtime_cap_s", _duration),
    "default_min_runtime": Knob("default_min_runtime_s", _duration),
    "debug_threshold": Knob("debug_threshold_s", _duration),
    "reconcile_interval": Knob("reconcile_interval_s", _duration),
    "human_drain_threshold": Knob("human_drain_threshold_s", _duration),
    "fairshare_period": Knob("fairshare_period_s", _duration),
    "reclaim_hysteresis": Knob("reclaim_hysteresis", _weight),
    "queue_depth": Knob("queue_depth", _count),
    "reservations": Knob("reservations", _count),
    "keep_hold": Knob("keep_hold", _keep_hold),
    "keep_hold_min_fraction": Knob("keep_hold_min_fraction", _fraction),
    "kept_hold_debug": Knob("kept_hold_debug", _bool),
    "hand_over": Knob("hand_over", _hand_over),
    "hold_evicts": Knob("hold_evicts", _hold_evicts),
    "spare_gangs": Knob("spare_gangs", _spare_gangs),
    "debug_reclaim": Knob("debug_reclaim", _bool),
    "consolidate": Knob("consolidate", _bool),
    "debug_over_cap": Knob("debug_over_cap", _gpus),
    "debug_over_cap_admits": Knob("debug_over_cap_admits", _over_cap_admits),
    "unallocated": Knob("unallocated_enabled", _bool),
    "interactive.grace": Knob("grace_s", _duration, interactive=True),
    "interactive.restore_hook": Knob("restore_hook", _hook, interactive=True),
    "interactive.pool": Knob("pool", _pool, interactive=True),
    "preemption.requeue_resumable": Knob("requeue_resumable", _bool),
    "preemption.non_resumable": Knob("non_resumable", _non_resumable),
    **{
        f"priority_weights.{w}": Knob(w, _weight, weight=True)
        for w in ("deadline", "fit", "age", "fairness", "declared")
    },
    "priority_weights.age_cap": Knob("age_cap_s", _duration, weight=True),
    "within_team.mode": Knob("mode", _mode, weight=True),
    "within_team.dependencies": Knob("dependencies", _bool, weight=True),
    "within_team.threshold": Knob("threshold", _weight, weight=True),
    "within_team.blend": Knob("blend", _weight, weight=True),
    "within_team.short_prerequisite": Knob("short_prerequisite", _weight, weight=True),
    **{
        f"within_team.{side}.{w}": Knob(f"{side}.{w}", _weight, weight=True)
        for side in ("below", "above")
        for w in ("deadline", "fit", "age", "fairness", "declared")
    },
}
_SHORT = {"requeue_resumable": "preemption.requeue_resumable",
          "non_resumable": "preemption.non_resumable"}


def knob_names() -> str:
    """The public names, for errors and ``--help``."""
    return ", ".join(KNOBS)


def apply_overrides(policy: Policy, overrides: Mapping[str, str], cluster: str | None = None,
                    nodes: Sequence[str] = ()) -> Policy:
    """``policy`` with the ``--set`` knobs applied.  ``cluster`` and its ``nodes``, when the
    caller knows them: a pool given there is checked as the file's is (``config.pool_nodes``)."""
    changes: dict[str, Any] = {}
    weights: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key in sorted(overrides):
        name = key.strip().replace("-", "_")
        name = _SHORT.get(name, name)
        knob = KNOBS.get(name)
        if knob is None:
            raise UsageError(f"--set {key}: unknown knob; known: {knob_names()}")
        try:
            value = knob.parse(overrides[key])
        except ValueError as exc:
            raise UsageError(f"--set {key}: {exc}") from None
        if knob.field == "pool":  # two fields of the interactive class at once
            given = value["pool_nodes"] if not value["pool_names"] else value["pool_names"]
            problems = pool_problems(given, cluster, nodes) if cluster is not None else []
            if problems:
                raise UsageError("; ".join(f"--set {key}: {p.message}" for p in problems))
            session.update(value)
            continue
        (weights if knob.weight else session if knob.interactive else changes)[knob.field] = value
    if session:
        changes["interactive"] = dataclasses.replace(policy.interactive, **session)
    if weights:
        pw = policy.priority_weights
        sets = {}  # within_team.below.fit -> the below set with fit replaced
        for side in ("below", "above"):
            mine = {f.split(".", 1)[1]: weights.pop(f) for f in sorted(weights) if f.startswith(f"{side}.")}
            if mine:
                sets[side] = dataclasses.replace(getattr(pw, side), **mine)
        changes["priority_weights"] = dataclasses.replace(pw, **weights, **sets)
    return policy.with_overrides(**changes) if changes else policy
