"""Boosts that stay honest (issue 28, item 4): the expiry bound is a knob, judged from the date the
config is checked; a load without a date does not judge it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from allotment.config.files import read_repo_files
from allotment.config.loader import load_config
from allotment.errors import ConfigError
from tests.config.corpus import materialize

LONG = """boosts:
  - target: account:vision
    amount: 1
    expires: 2026-06-21T00:00:00Z
    reason: three weeks
    approver: vision.lead@acme.example
"""


def _repo(tmp_path: Path, scheduler_extra: str = "") -> Path:
    repo = materialize("boost-expired-warns", tmp_path / "repo")
    (repo / "policies" / "boosts.yaml").write_text(LONG)
    if scheduler_extra:
        sched = repo / "policies" / "scheduler.yaml"
        sched.write_text(sched.read_text() + scheduler_extra)
    return repo


def test_a_boost_longer_than_boost_max_is_refused_at_its_expiry(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(read_repo_files(_repo(tmp_path)), dt.date(2026, 6, 1))
    assert str(exc.value).splitlines() == [
        "policies/boosts.yaml:4:14: boost for account:vision expires 20d after 2026-06-01; at most 7d "
        "(boost_max in policies/scheduler.yaml)"
    ]


def test_boost_max_knob_raises_the_bound(tmp_path: Path) -> None:
    load_config(read_repo_files(_repo(tmp_path, "boost_max: 21d\n")), dt.date(2026, 6, 1))


def test_the_bound_counts_from_the_check_date_so_a_boost_only_gets_shorter(tmp_path: Path) -> None:
    load_config(read_repo_files(_repo(tmp_path)), dt.date(2026, 6, 15))


def test_a_load_without_a_date_does_not_judge_expiries(tmp_path: Path) -> None:
    load_config(read_repo_files(_repo(tmp_path)))
