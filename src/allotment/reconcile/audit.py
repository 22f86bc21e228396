"""The append-only audit log: one JSON line per action, written twice, as intent before the
backend is asked (``"phase": "intent"``) and as outcome after (``"phase": "outcome"``, with the
result code), so a crash between the two still leaves the action on record.  Lines are flushed
and fsynced per batch.

On start (``AuditLog.__init__``) the log is repaired: a last line cut by a crash (no newline)
is moved to ``audit.jsonl.torn`` instead of swallowing the next record, and every intent with
no outcome gets one, ``"result": "interrupted"`` (the next observation shows whether it took
effect; the tick after that converges either way).  Nothing else ever rewrites the file.

An operator's request (``allot reconcile suspend|resume|now``) is one more line,
``"phase": "control"``, appended by the command that asks (``reconcile.control``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from allotment.backends.actions import Action, ActionResult, PolicyAction
from allotment.timefmt import parse_rfc3339, rfc3339


def audit_time(at: float) -> str:
    """How a record's ``time`` is written (the one place that decides it): RFC 3339 UTC to the
    millisecond, as the log lines are."""
    return rfc3339(at, ms=True)


def entry_time(entry: Mapping[str, object]) -> float:
    """A record's ``time`` in Unix seconds: RFC 3339, or a number in a log written before."""
    t = entry.get("time", 0.0)
    if isinstance(t, str):
        return parse_rfc3339(t)
    return float(t) if isinstance(t, int | float) else 0.0


def _entry(a: Action, *, at: float, revision: str, dry_run: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "time": audit_time(at),
        "revision": revision,
        "action": a.kind,
        "target": a.target,
        "rule": a.rule,
        "reason": a.reason,
        "dry_run": dry_run,
    }
    if isinstance(a, PolicyAction):
        entry["fields"] = dict(a.fields)
    elif a.kind == "set_priority":
        entry["value"] = a.value
    return entry


def intent_lines(actions: Sequence[Action], *, at: float, revision: str) -> list[str]:
    return [
        json.dumps(
            _entry(a, at=at, revision=revision, dry_run=False)
            | {"phase": "intent", "seq": i, "batch": _batch(at, revision)},
            sort_keys=True,
        )
        for i, a in enumerate(actions)
    ]


def audit_lines(
    results: Iterable[ActionResult], *, at: float, revision: str, dry_run: bool
) -> list[str]:
    out = []
    for i, r in enumerate(results):
        entry = _entry(r.action, at=at, revision=revision, dry_run=dry_run)
        entry |= {"phase": "outcome", "result": r.code}
        if not dry_run:
            entry |= {"seq": i, "batch": _batch(at, revision)}
        if r.message:
            entry["message"] = r.message
        out.append(json.dumps(entry, sort_keys=True))
    return out


def _batch(at: float, revision: str) -> str:
    return f"{at:.3f}/{revision[:12]}"


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._repair()

    def append(self, lines: list[str]) -> None:
        """Append in one ``write`` on an ``O_APPEND`` descriptor: an operator's request
        (``reconcile.control``) appended by another process meanwhile lands between two
        batches, never inside one."""
        if not lines:
            return
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:  # a regular file takes it whole; loop only for a short write
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[dict[str, Any]]:
        return read_lines(self.path)

    def _repair(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.path.with_name(self.path.name + ".torn").open("ab") as f:
                f.write(data[keep:] + b"\n")
            with self.path.open("r+b") as f:
                f.truncate(keep)
                os.fsync(f.fileno())
        open_intents: dict[tuple[str, int], dict[str, Any]] = {}
        for e in self.read():
            key = (str(e.get("batch", "")), int(e.get("seq", -1)))
            if e.get("phase") == "intent":
                open_intents[key] = e
            elif e.get("phase") == "outcome":
                open_intents.pop(key, None)
        self.append(
            [
                json.dumps(
                    e
                    | {
                        "phase": "outcome",
                        "result": "interrupted",
                        "message": "stopped between intent and outcome; the next tick observes",
                    },
                    sort_keys=True,
                )
                for e in open_intents.values()
            ]
        )


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every whole JSON line of an audit log, read only (a viewer beside a running reconciler
    must not repair it): a line cut by a crash, or still being written, is skipped."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
