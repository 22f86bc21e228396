"""Source names become config names: valid, one-to-one, stable."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from allotment.config.models.common import NAME_PATTERN, USER_PATTERN
from allotment.traces.names import account_mapper, user_mapper


@given(st.lists(st.text(max_size=60), max_size=30))
def test_account_names_are_valid_and_distinct(raws: list[str]) -> None:
    m = account_mapper()
    out = {r: m(r) for r in raws}
    assert all(re.fullmatch(NAME_PATTERN, n) for n in out.values())
    assert len(set(out.values())) == len(out)  # distinct sources stay distinct
    assert all(m(r) == n for r, n in out.items())  # stable


@given(st.lists(st.text(max_size=40), max_size=30))
def test_user_names_are_valid_and_distinct(raws: list[str]) -> None:
    m = user_mapper()
    out = {r: m(r) for r in raws}
    assert all(re.fullmatch(USER_PATTERN, n) for n in out.values())
    assert len(set(out.values())) == len(out)


def test_readable_names_survive() -> None:
    m = account_mapper()
    assert [m("Team A"), m("team-b"), m("7"), m("LS")] == ["team-a", "team-b", "a7", "ls"]
    assert m("Team  A") != m("Team A")  # collapses to the same text, kept apart by a suffix
