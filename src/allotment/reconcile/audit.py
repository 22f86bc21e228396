"""The append-only audit log: one JSON line per action, written twice, as intent before the
backend is asked (``"phase": "intent"``) and as outcome after (``"phase": "outcome"``, with the
result code), so a crash between the two still leaves the action on record.  Lines are flushed
and fsynced per batch.

On start (``AuditLog.__init__``) the log is repaired: a last line cut by a crash (no newline)
is moved to ``audit.jsonl.torn`` instead of swallowing the next record, and every intent with
no outcome gets one, ``"result": "interrupted"`` (the next observation shows whether it took
effect; the tick after that converges either way).  Nothing else ever rewrites the file.

The log is rotated by size (``AuditLog.rotate``, after a tick's outcomes, so no intent is ever
separated from its outcome): past ``ROTATE_BYTES`` it becomes ``audit.jsonl.1``, the older ones
move up to ``.{ROTATE_KEEP}`` and the oldest is dropped, so the log holds at most about
``(ROTATE_KEEP + 1) x ROTATE_BYTES`` (issue 32, item 4: nothing rotated it, and at 1M lines every
page view re-read 222 MB).

A whole line of the wrong shape (``"seq": "x"``, a time that is not a finite number: a hand
edit, another tool) is skipped by every reader with a ``file:line`` warning, never a crash: it
was never written by a reconciler, so skipping it loses no record the reconciler relies on.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from allotment.backends.actions import Action, ActionResult, PolicyAction

log = logging.getLogger(__name__)


def _entry(a: Action, *, at: float, revision: str, dry_run: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "time": round(at, 3),
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


ROTATE_BYTES = 64 << 20  # 64 MiB, about 250,000 actions
ROTATE_KEEP = 4  # rotated files kept: audit.jsonl.1 (newest) .. audit.jsonl.4


def rotated(path: Path, k: int) -> Path:
    return path.with_name(f"{path.name}.{k}")


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._repair()

    def rotate(self, max_bytes: int | None = None, keep: int | None = None) -> bool:
        """Start a new file when this one is over ``max_bytes`` (``ROTATE_BYTES``), keeping
        ``keep`` (``ROTATE_KEEP``) rotated ones; call only between ticks' batches (every intent
        written has its outcome).  Returns whether it rotated."""
        max_bytes = ROTATE_BYTES if max_bytes is None else max_bytes
        keep = ROTATE_KEEP if keep is None else keep
        try:
            if self.path.stat().st_size <= max_bytes:
                return False
        except FileNotFoundError:
            return False
        rotated(self.path, keep).unlink(missing_ok=True)
        for k in range(keep - 1, 0, -1):
            if rotated(self.path, k).exists():
                os.replace(rotated(self.path, k), rotated(self.path, k + 1))
        os.replace(self.path, rotated(self.path, 1))
        return True

    def append(self, lines: list[str]) -> None:
        if not lines:
            return
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())

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
        skipped: list[str] = []
        for e in read_lines(self.path, skipped):
            key = audit_key(e)
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
        for why in skipped:
            log.warning("%s", why)


def read_lines(path: Path, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """Every whole JSON line of an audit log, read only (a viewer beside a running reconciler
    must not repair it): a line cut by a crash, or still being written, is skipped, and so is a
    line of the wrong shape, said in ``skipped`` as ``file:line: why``."""
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        entry, problem = entry_of(line)
        if problem and skipped is not None:
            skipped.append(f"{path}:{n}: {problem}; line skipped")
        if entry is not None:
            out.append(entry)
    return out


def entry_of(line: str) -> tuple[dict[str, Any] | None, str]:
    """One whole line of the log: its entry, or None and why not ("" for a line that is not
    JSON at all, cut by a crash or still being written)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None, ""
    if not isinstance(entry, dict):
        return None, ""
    problem = _shape_problem(entry)
    return (None, problem) if problem else (entry, "")


def audit_key(e: dict[str, Any]) -> tuple[str, int]:
    """What pairs an intent with its outcome: its batch and its place in the batch."""
    return str(e.get("batch", "")), int(e.get("seq", -1))


def _shape_problem(e: dict[str, Any]) -> str:
    seq = e.get("seq", -1)
    if isinstance(seq, bool) or not isinstance(seq, int):
        return f"'seq' must be a whole number, got {seq!r}"
    t = e.get("time", 0.0)
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        return f"'time' must be a finite number, got {t!r}"
    return ""
