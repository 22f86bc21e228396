"""Issue 32, item 4: the audit log is rotated by size with a fixed retention (nothing rotated
it: at 1M lines, 222 MB, every page view re-read it), never between an intent and its outcome,
and ``allot serve`` reads on across a rotation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.legible.livestate import AuditTail, _digest
from allotment.reconcile import audit
from allotment.reconcile.audit import AuditLog, read_lines, rotated


def test_the_reconcilers_audit_log_is_rotated_by_size_after_a_ticks_outcomes(
    config_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "ROTATE_BYTES", 100)
    state = tmp_path / "state"
    assert main(["reconcile", "--backend", "sim", "--source", str(config_repo), "--state",
                 str(state), "--once"]) == 0
    old = read_lines(rotated(state / "audit.jsonl", 1))
    assert old and not read_lines(state / "audit.jsonl")
    intents = {audit.audit_key(e) for e in old if e.get("phase") == "intent"}
    outcomes = {audit.audit_key(e) for e in old if e.get("phase") == "outcome"}
    assert intents and intents <= outcomes  # no intent left without its outcome in another file


def test_rotation_keeps_a_fixed_number_of_files(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(7):
        log.append([json.dumps({"seq": i, "time": 0.0})])
        assert log.rotate(max_bytes=1, keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]
    assert [read_lines(rotated(log.path, k))[0]["seq"] for k in (1, 2, 3)] == [6, 5, 4]
    log.append(["{}"])
    assert not log.rotate(max_bytes=100, keep=3)  # under the size: left alone


def _line(i: int) -> str:
    return json.dumps({"phase": "outcome", "batch": "b", "seq": i, "time": float(i),
                       "action": "requeue", "rule": "reclaim", "result": "applied",
                       "target": f"j{i}", "dry_run": False}) + "\n"


def test_serve_reads_on_across_a_rotation(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(_line(i) for i in range(5)))
    tail = AuditTail(path)
    assert tail.read().preemptions == {"reclaim": 5}
    with path.open("a") as f:
        f.write("".join(_line(i) for i in range(5, 8)))  # written before the rotation ...
    os.replace(path, rotated(path, 1))
    path.write_text("".join(_line(i) for i in range(8, 10)))  # ... and after it
    digest = tail.read()
    assert digest.preemptions == {"reclaim": 10}  # nothing lost, nothing counted twice
    whole = read_lines(rotated(path, 1)) + read_lines(path)
    assert digest.actions() == _digest(whole).actions()[-len(digest.actions()):]
