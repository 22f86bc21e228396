"""What the reconciler last did, for a person (``allot status --reconciler``) and a machine
(``status.json`` in the state dir, replaced atomically so a reader never sees half a file).

Conditions follow the Kubernetes kstatus / Flux convention:

* ``Stalled``: it cannot make progress without help (the backend fails, the state dir cannot be
  written, the clocks disagree, the newest commit does not validate or the backend rejects it);
* ``Reconciling``: a tick changed something, so the cluster is still catching up;
* ``Ready``: the cluster matches the newest commit.  ``Ready`` is False whenever ``Stalled`` or
  ``Reconciling`` is True (``conditions`` enforces it, whatever the tick set).

Each carries ``status`` ("True"/"False"), a ``reason`` (one CamelCase word), a ``message`` and an
RFC 3339 ``lastTransitionTime`` (when ``status`` last changed).  A status file is only as good as
the process that writes it: a reconciler that hangs or died leaves its last words behind, so
``read_status`` judges them against the clock, and a ``last_tick`` older than ``STALE_TICKS``
intervals reads as ``Ready=False, reason=Stale``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from allotment.reconcile.capacity_drift import CapacityDrift, GpuCountDiff
from allotment.reconcile.state_errors import StateDirError, StateFileError, write_atomic
from allotment.strict_json import loads_finite
from allotment.timefmt import parse_rfc3339, rfc3339

STATUS_FILE = "status.json"
STALE_TICKS = 3  # a last tick older than this many intervals means the reconciler is not running
# wall-clock times, written as RFC 3339 UTC (``allotment.timefmt``) to the millisecond; a file
# from before holds Unix seconds, which are still read
TIME_FIELDS = (
    "last_tick", "last_backend_time", "suspended_since", "last_handled_reconcile_at", "leader_since",
)


@dataclass(slots=True)
class Condition:
    type: str
    status: bool
    reason: str
    message: str = ""
    since: float = 0.0  # Unix seconds of the last change of ``status``


@dataclass(slots=True)
class Status:
    backend: str = ""
    cluster: str = ""
    source: str = ""
    last_applied_revision: str | None = None
    last_applied_inputs_sha256: str | None = None
    last_attempted_revision: str | None = None
    driving_revision: str | None = None  # what active mode ran on in the last tick
    last_error: str | None = None
    last_tick: float = 0.0
    interval_s: float = 10.0
    ticks: int = 0
    # the last tick's wall time and result, and every tick's (``reconcile.tick_metrics``)
    last_tick_duration_s: float | None = None
    last_tick_result: str | None = None  # "success" or "error"
    tick_results: dict[str, int] = field(default_factory=dict)  # result -> ticks, all time
    tick_duration_sum_s: float = 0.0
    tick_duration_buckets: dict[str, int] = field(default_factory=dict)  # "le" -> ticks, cumulative
    clock_skew_s: float | None = None  # backend clock minus ours at the last observation
    last_backend_time: float | None = None  # the backend's clock at the last observation
    conditions: list[Condition] = field(default_factory=list)
    action_counts: dict[str, int] = field(default_factory=dict)  # result code -> count, all time
    last_tick_counts: dict[str, int] = field(default_factory=dict)
    bad_revisions: dict[str, str] = field(default_factory=dict)  # sha -> first error
    rejected_revisions: dict[str, str] = field(default_factory=dict)  # sha -> backend's refusal
    drift: list[str] = field(default_factory=list)  # drift found in the last tick
    prune_skipped: list[str] = field(default_factory=list)
    # an operator's requests as the last tick saw them (``reconcile.control``)
    suspended_by: str | None = None  # None: not suspended
    suspended_since: float | None = None
    suspend_reason: str = ""
    last_handled_reconcile_at: float | None = None  # Flux's lastHandledReconcileAt
    # the observed cluster against the inventory at the last observation (``capacity_drift``)
    capacity: CapacityDrift | None = None
    # with replicas (reconcile.replicas): who leads, under which lease token, since when
    leader: str | None = None
    leader_token: int | None = None
    leader_since: float | None = None

    def set_condition(
        self, type_: str, status: bool, reason: str, message: str, now: float
    ) -> None:
        for c in self.conditions:
            if c.type == type_:
                if c.status != status:
                    c.since = now
                c.status, c.reason, c.message = status, reason, message
                return
        self.conditions.append(Condition(type_, status, reason, message, now))
        self.conditions.sort(key=lambda c: c.type)

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)


def conditions(status: Status, now: float) -> list[Condition]:
    """The conditions as a reader should believe them at ``now``: ``Ready`` False whenever
    ``Stalled`` or ``Reconciling`` is True, or when the last tick is stale (the process hangs or
    is gone).  Pure; the file is not changed."""
    out = [Condition(c.type, c.status, c.reason, c.message, c.since) for c in status.conditions]
    by = {c.type: c for c in out}
    ready = by.get("Ready")
    if ready is None:
        ready = Condition("Ready", False, "NeverRan", "no tick has finished yet", status.last_tick)
        out.append(ready)
    age = now - status.last_tick
    limit = STALE_TICKS * max(status.interval_s, 1.0)
    if status.ticks and age > limit:
        ready.status, ready.reason = False, "Stale"
        ready.message = (
            f"last tick {age:.0f} s ago (more than {STALE_TICKS} x {status.interval_s:g} s)"
        )
    for blocker in ("Stalled", "Reconciling"):
        c = by.get(blocker)
        if c is not None and c.status and ready.status:
            ready.status, ready.reason, ready.message = False, blocker, c.message
    return sorted(out, key=lambda c: c.type)


def suspended_line(status: Status) -> str:
    """Who suspended the reconciler, since when and why (``allot reconcile suspend``)."""
    since = "-" if status.suspended_since is None else rfc3339(status.suspended_since)
    why = f": {status.suspend_reason}" if status.suspend_reason else ""
    return f"by {status.suspended_by} since {since}{why}; nothing is applied until resumed"


def is_ready(status: Status, now: float) -> bool:
    return any(c.type == "Ready" and c.status for c in conditions(status, now))




class _ConditionFile(BaseModel):
    """A condition as written (or, ``status`` a bool and ``since`` in Unix seconds, as the
    version before kstatus wrote it, so an upgrade does not refuse its own state dir)."""

    model_config = ConfigDict(strict=True, extra="ignore")
    type: str
    status: str | bool
    reason: str
    message: str = ""
    lastTransitionTime: str | None = None  # the Kubernetes field name
    since: float | int | None = None

    def to_condition(self) -> Condition:
        truth = self.status if isinstance(self.status, bool) else _truth(self.status)
        if self.lastTransitionTime is not None:
            when = parse_rfc3339(self.lastTransitionTime)
        elif self.since is not None:
            when = float(self.since)
        else:
            raise ValueError(f"condition {self.type} has no lastTransitionTime")
        return Condition(self.type, truth, self.reason, self.message, when)


class _StatusFile(BaseModel):
    """The file format, validated strictly: a hand-edited or corrupt file is refused whole."""

    model_config = ConfigDict(strict=True, extra="ignore")
    backend: str = ""
    cluster: str = ""
    source: str = ""
    last_applied_revision: str | None = None
    last_applied_inputs_sha256: str | None = None
    last_attempted_revision: str | None = None
    driving_revision: str | None = None
    last_error: str | None = None
    last_tick: float = 0.0
    interval_s: float = 10.0
    ticks: int = 0
    last_tick_duration_s: float | None = None
    last_tick_result: str | None = None
    tick_results: dict[str, int] = {}
    tick_duration_sum_s: float = 0.0
    tick_duration_buckets: dict[str, int] = {}
    clock_skew_s: float | None = None
    last_backend_time: float | None = None
    conditions: list[_ConditionFile] = []
    action_counts: dict[str, int] = {}
    last_tick_counts: dict[str, int] = {}
    bad_revisions: dict[str, str] = {}
    rejected_revisions: dict[str, str] = {}
    drift: list[str] = []
    prune_skipped: list[str] = []
    suspended_by: str | None = None
    suspended_since: float | None = None
    suspend_reason: str = ""
    last_handled_reconcile_at: float | None = None
    capacity: _CapacityFile | None = None
    leader: str | None = None
    leader_token: int | None = None
    leader_since: float | None = None


class _GpuCountFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    node: str
    inventory_gpus: int
    observed_gpus: int


class _CapacityFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    inventory_gpus: int
    observed_gpus: int
    inventory_nodes: int
    observed_nodes: int
    missing: list[str] = []
    extra: list[str] = []
    differs: list[_GpuCountFile] = []

    def to_record(self) -> CapacityDrift:
        return CapacityDrift(
            self.inventory_gpus, self.observed_gpus, self.inventory_nodes, self.observed_nodes,
            tuple(self.missing), tuple(self.extra),
            tuple(GpuCountDiff(d.node, d.inventory_gpus, d.observed_gpus) for d in self.differs),
        )


def read_status(state_dir: Path) -> Status:
    """The status in ``state_dir`` (an empty Status when there is none yet); StateFileError
    (exit 2) for a file that is not a status file, StateDirError (exit 3) when it cannot be read."""
    path = state_dir / STATUS_FILE
    try:
        if not path.exists():
            return Status()
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StateDirError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        raw = loads_finite(text)
        if isinstance(raw, dict):
            for k in TIME_FIELDS:
                if isinstance(raw.get(k), str):
                    raw[k] = parse_rfc3339(raw[k])
            for k in ("last_tick", "interval_s", "clock_skew_s", "last_backend_time",
                      "last_tick_duration_s", "tick_duration_sum_s", "suspended_since",
                      "last_handled_reconcile_at", "leader_since"):
                if isinstance(raw.get(k), int) and not isinstance(raw.get(k), bool):
                    raw[k] = float(raw[k])
        f = _StatusFile.model_validate(raw)
        conds = [c.to_condition() for c in f.conditions]
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()
        why = (
            " ".join(first[:3]) if isinstance(exc, ValidationError) else (first[0] if first else "")
        )
        raise StateFileError(f"{path}: not a reconciler status file ({why})") from None
    data = f.model_dump(exclude={"conditions", "capacity"})
    capacity = f.capacity.to_record() if f.capacity is not None else None
    return Status(conditions=conds, capacity=capacity, **data)


load_status = read_status


def _truth(text: str) -> bool:
    if text not in ("True", "False"):
        raise ValueError(f"condition status {text!r} is not True or False")
    return text == "True"


def status_json(status: Status, now: float | None = None) -> dict[str, Any]:
    """The file's shape: conditions as kstatus writes them (as judged at ``now`` when given),
    wall-clock times (``TIME_FIELDS``) as RFC 3339 UTC."""
    raw = asdict(status)
    for k in TIME_FIELDS:
        if raw[k] is not None:
            raw[k] = rfc3339(raw[k], ms=True)
    conds = status.conditions if now is None else conditions(status, now)
    raw["conditions"] = [
        {
            "type": c.type,
            "status": "True" if c.status else "False",
            "reason": c.reason,
            "message": c.message,
            "lastTransitionTime": rfc3339(c.since),
        }
        for c in conds
    ]
    return raw


def save_status(state_dir: Path, status: Status) -> None:
    """Write atomically (temp file, fsync, rename); StateDirError when the dir refuses."""
    write_atomic(state_dir / STATUS_FILE, json.dumps(status_json(status), sort_keys=True, indent=2) + "\n")


def render_text(status: Status, now: float) -> str:
    """The human view: one line per fact, conditions first (as judged at ``now``)."""
    lines = [f"reconciler  backend={status.backend or '-'} cluster={status.cluster or '-'}"]
    judged = conditions(status, now)
    width = max([12, *(len(c.type) for c in judged)])  # the types in one column
    for c in judged:
        mark = "True " if c.status else "False"
        lines.append(f"  {c.type:<{width}} {mark} {c.reason}: {c.message}  (since {rfc3339(c.since)})")
    ago = f"{now - status.last_tick:.0f} s ago" if status.ticks else "never"
    took = (
        f", took {status.last_tick_duration_s:.3g} s, {status.last_tick_result}"
        if status.last_tick_duration_s is not None
        else ""
    )
    lines.append(f"last tick                {ago} (every {status.interval_s:g} s{took})")
    if status.suspended_by is not None:
        lines.append(f"suspended                {suspended_line(status)}")
    if status.leader is not None:
        since = "" if status.leader_since is None else f" since {rfc3339(status.leader_since)}"
        lines.append(f"leader                   {status.leader} (lease token {status.leader_token}){since}")
    lines.append(f"last applied revision    {status.last_applied_revision or '-'}")
    lines.append(f"  inputs sha256          {status.last_applied_inputs_sha256 or '-'}")
    lines.append(f"last attempted revision  {status.last_attempted_revision or '-'}")
    lines.append(f"driving revision         {status.driving_revision or '-'}")
    skew = "-" if status.clock_skew_s is None else f"{status.clock_skew_s:+.1f} s"
    lines.append(f"backend clock skew       {skew}")
    lines.append(f"last error               {status.last_error or '-'}")
    counts = ", ".join(f"{k}={v}" for k, v in sorted(status.action_counts.items())) or "-"
    lines.append(f"actions (all ticks)      {counts}")
    last = ", ".join(f"{k}={v}" for k, v in sorted(status.last_tick_counts.items())) or "-"
    lines.append(f"actions (last tick)      {last}")
    for sha, err in sorted(status.bad_revisions.items()):
        lines.append(f"rejected {sha[:12]}: {err}")
    for sha, err in sorted(status.rejected_revisions.items()):
        lines.append(f"refused by the backend {sha[:12]}: {err}")
    for d in status.drift:
        lines.append(f"drift: {d}")
    for p in status.prune_skipped:
        lines.append(f"prune skipped: {p}")
    return "\n".join(lines) + "\n"
