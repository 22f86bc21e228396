"""The append-only audit log: one JSON line per action taken (or withheld), with time, revision,
target, rule, reason and result.  Lines are flushed and fsynced per tick, so what the cluster
saw done is on disk before the next tick starts; nothing ever rewrites the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from allotment.backends.actions import ActionResult, PolicyAction


def audit_lines(
    results: Iterable[ActionResult], *, at: float, revision: str, dry_run: bool
) -> list[str]:
    out = []
    for r in results:
        a = r.action
        entry = {
            "time": round(at, 3),
            "revision": revision,
            "action": a.kind,
            "target": a.target,
            "rule": a.rule,
            "reason": a.reason,
            "result": r.code,
            "dry_run": dry_run,
        }
        if isinstance(a, PolicyAction):
            entry["fields"] = dict(a.fields)
        elif a.kind == "set_priority":
            entry["value"] = a.value
        if r.message:
            entry["message"] = r.message
        out.append(json.dumps(entry, sort_keys=True))
    return out


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, lines: list[str]) -> None:
        if not lines:
            return
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[dict[str, object]]:
        if not self.path.exists():
            return []
        return [
            json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line
        ]
