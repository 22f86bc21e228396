"""Every applied and expired boost appears in the audit log, once (issue 28, item 4)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from allotment.compile.model import Boost
from allotment.reconcile.boost_audit import boost_transitions
from allotment.reconcile.reconciler import Options
from tests.reconcile.conftest import T0
from tests.reconcile.repo import commit_all

EXPIRES = dt.datetime.fromtimestamp(T0 + 3600, dt.UTC)
B = Boost("account:teama1", 2.0, EXPIRES, "paper deadline", "lead@example.com")


def _events(lines: list[str]) -> list[tuple[str, str]]:
    return [(e["event"], e["target"]) for e in map(json.loads, lines)]


def test_a_boost_is_logged_when_it_starts_counting_and_when_it_expires_once_each() -> None:
    lines, mem = boost_transitions((B,), {}, T0, "r1")
    assert _events(lines) == [("applied", "account:teama1")]
    entry = json.loads(lines[0])
    assert entry["approver"] == "lead@example.com" and entry["reason"] == "paper deadline"
    lines, mem = boost_transitions((B,), mem, T0 + 60, "r1")
    assert lines == []
    lines, mem = boost_transitions((B,), mem, T0 + 3600, "r1")
    assert _events(lines) == [("expired", "account:teama1")]
    lines, mem = boost_transitions((B,), mem, T0 + 7200, "r1")
    assert lines == []


def test_a_boost_removed_while_it_counts_is_logged_as_withdrawn() -> None:
    _, mem = boost_transitions((B,), {}, T0, "r1")
    lines, mem = boost_transitions((), mem, T0 + 60, "r2")
    assert _events(lines) == [("withdrawn", "account:teama1")]
    assert mem == {}


def test_a_boost_already_expired_when_first_seen_is_not_logged_as_applied() -> None:
    lines, _ = boost_transitions((B,), {}, T0 + 7200, "r1")
    assert lines == []


def test_the_reconciler_logs_boosts_in_its_audit_log_and_not_again_after_a_restart(
    make_reconciler: Any, config_repo: Path, tmp_path: Path
) -> None:
    (config_repo / "policies" / "boosts.yaml").write_text(
        "boosts:\n  - target: account:teama1\n    amount: 2\n"
        f"    expires: {EXPIRES.isoformat()}\n    reason: paper deadline\n    approver: lead@example.com\n"
    )
    commit_all(config_repo, "boost teama1")
    rec = make_reconciler(Options(tiers_s=(20,), active=True))
    rec.tick()
    rec.tick()
    rec.close()
    again = make_reconciler(Options(tiers_s=(20,), active=True))
    again.tick()
    again.clock.t = again.backend.state.now = T0 + 3600
    again.tick()
    log = [json.loads(x) for x in (tmp_path / "state" / "audit.jsonl").read_text().splitlines()]
    assert [(e["event"], e["target"]) for e in log if e.get("phase") == "boost"] == [
        ("applied", "account:teama1"), ("expired", "account:teama1")]
