"""What the reconciler last did, for a person (``allot status --reconciler``) and a machine
(``status.json`` in the state dir, replaced atomically so a reader never sees half a file).

Conditions follow the Kubernetes/Flux convention: ``Ready`` (the cluster matches the last good
revision), ``Reconciling`` (a tick changed something or is catching up) and ``Stalled`` (it
cannot make progress: the backend fails, or the newest commit does not validate); each has a
status, a reason (one CamelCase word) and a message.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from allotment.errors import UsageError

STATUS_FILE = "status.json"


@dataclass(slots=True)
class Condition:
    type: str
    status: bool
    reason: str
    message: str = ""
    since: float = 0.0


@dataclass(slots=True)
class Status:
    backend: str = ""
    cluster: str = ""
    source: str = ""
    last_applied_revision: str | None = None
    last_applied_inputs_sha256: str | None = None
    last_attempted_revision: str | None = None
    last_error: str | None = None
    last_tick: float = 0.0
    ticks: int = 0
    conditions: list[Condition] = field(default_factory=list)
    action_counts: dict[str, int] = field(default_factory=dict)  # result code -> count, all time
    last_tick_counts: dict[str, int] = field(default_factory=dict)
    bad_revisions: dict[str, str] = field(default_factory=dict)  # sha -> first error
    drift: list[str] = field(default_factory=list)  # drift found in the last tick
    prune_skipped: list[str] = field(default_factory=list)

    def set_condition(
        self, type_: str, status: bool, reason: str, message: str, now: float
    ) -> None:
        for c in self.conditions:
            if c.type == type_:
                if c.status != status or c.reason != reason:
                    c.since = now
                c.status, c.reason, c.message = status, reason, message
                return
        self.conditions.append(Condition(type_, status, reason, message, now))
        self.conditions.sort(key=lambda c: c.type)

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)


def load_status(state_dir: Path) -> Status:
    path = state_dir / STATUS_FILE
    if not path.exists():
        return Status()
    try:
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        conds = [Condition(**c) for c in raw.pop("conditions", [])]
        return Status(conditions=conds, **raw)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path}: not a reconciler status file ({exc})") from exc


def save_status(state_dir: Path, status: Status) -> None:
    path = state_dir / STATUS_FILE
    tmp = path.with_name(f".{STATUS_FILE}.tmp")
    tmp.write_text(json.dumps(asdict(status), sort_keys=True, indent=2) + "\n", encoding="utf-8")
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    tmp.replace(path)


def render_text(status: Status) -> str:
    """The human view: one line per fact, conditions first."""
    lines = [f"reconciler  backend={status.backend or '-'} cluster={status.cluster or '-'}"]
    for c in status.conditions:
        mark = "True " if c.status else "False"
        lines.append(f"  {c.type:<12} {mark} {c.reason}: {c.message}")
    lines.append(f"last applied revision    {status.last_applied_revision or '-'}")
    lines.append(f"  inputs sha256          {status.last_applied_inputs_sha256 or '-'}")
    lines.append(f"last attempted revision  {status.last_attempted_revision or '-'}")
    lines.append(f"last error               {status.last_error or '-'}")
    counts = ", ".join(f"{k}={v}" for k, v in sorted(status.action_counts.items())) or "-"
    lines.append(f"actions (all ticks)      {counts}")
    last = ", ".join(f"{k}={v}" for k, v in sorted(status.last_tick_counts.items())) or "-"
    lines.append(f"actions (last tick)      {last}")
    for sha, err in sorted(status.bad_revisions.items()):
        lines.append(f"rejected {sha[:12]}: {err}")
    for d in status.drift:
        lines.append(f"drift: {d}")
    for p in status.prune_skipped:
        lines.append(f"prune skipped: {p}")
    return "\n".join(lines) + "\n"
