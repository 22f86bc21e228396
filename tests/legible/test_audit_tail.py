"""Issue 32, item 4: ``allot serve`` reads the audit log incrementally: each request parses only
the lines appended since the one before (at 1M lines every scrape re-read 222 MB and took 10.9 s,
past Prometheus' 10 s default), and what the views show is what a whole read shows."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from allotment.legible import livestate
from allotment.legible.livestate import AuditTail, audit_actions
from allotment.reconcile.audit import read_lines
from tests.legible.test_serve import _get, _serving


def _entries(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        batch, seq = f"b{i // 4}", i % 4
        base = {"batch": batch, "seq": seq, "time": float(i), "target": f"j{rnd.randrange(9)}",
                "action": rnd.choice(["requeue", "cancel", "set_priority", "add_qos"]),
                "rule": rnd.choice(["reclaim", "drain"]), "reason": "r",
                "dry_run": rnd.random() < 0.1}
        out.append(base | {"phase": "intent"})
        if rnd.random() < 0.9:
            out.append(base | {"phase": "outcome", "result": rnd.choice(["applied", "failed"])})
    return out


@pytest.mark.parametrize("chunk", [7, 1 << 22])
def test_read_in_pieces_is_the_same_as_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(livestate, "_CHUNK", chunk)
    log = tmp_path / "audit.jsonl"
    lines = [json.dumps(e) for e in _entries(400, 1)]
    tail = AuditTail(log, keep=10_000)
    with log.open("w") as f:
        for i, line in enumerate(lines):
            f.write(line + "\n")
            if i % 37 == 0:
                f.write('{"cut": ')  # a line still being written ...
                f.flush()
                tail.read()
                f.seek(f.tell() - len('{"cut": '))
                f.truncate()  # ... that is then finished as the next whole line
    digest = tail.read()
    whole = read_lines(log)
    assert digest.actions() == audit_actions(whole)
    assert digest.pinned == livestate._digest(whole).pinned
    assert digest.preemptions == livestate._digest(whole).preemptions


def test_a_replaced_log_is_read_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in _entries(50, 2)))
    tail = AuditTail(log)
    tail.read()
    os.replace(log, tmp_path / "moved.jsonl")  # moved away, not rotated: start over
    fresh = _entries(3, 3)
    log.write_text("".join(json.dumps(e) + "\n" for e in fresh))
    assert tail.read().actions() == audit_actions(fresh)


def test_a_request_parses_only_the_lines_appended_since_the_last(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    shutil.copytree(state_dir, state)
    parsed: list[str] = []
    real = livestate.entry_of

    def counting(line: str) -> Any:
        parsed.append(line)
        return real(line)

    monkeypatch.setattr(livestate, "entry_of", counting)
    with _serving(state) as url:
        assert _get(url + "/metrics")[0] == 200
        first = len(parsed)
        assert first == len((state / "audit.jsonl").read_text().splitlines())
        with (state / "audit.jsonl").open("a") as f:
            f.write(json.dumps(_entries(1, 4)[0]) + "\n")
        assert _get(url + "/metrics")[0] == 200
        assert _get(url + "/")[0] == 200
        assert len(parsed) == first + 1
