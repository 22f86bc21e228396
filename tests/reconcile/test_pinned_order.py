"""``pin_order``: after its changes priorities follow the wanted order, inside the pinned band,
and a job already in its place is never rewritten."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from allotment.reconcile.pinned_order import PINNED_FLOOR, PRIORITY_TOP, pin_order

_prio = st.one_of(
    st.integers(1, 200_000),  # multifactor
    st.integers(PINNED_FLOOR + 1, PRIORITY_TOP),  # pinned by us
    st.integers(PINNED_FLOOR + 1, PINNED_FLOOR + 4),  # a crowded band: forces a respread
)


@given(st.lists(_prio, min_size=0, max_size=40))
def test_after_pinning_priorities_strictly_fall_along_the_wanted_order(prios: list[int]) -> None:
    wanted = [str(i) for i in range(len(prios))]
    current = dict(zip(wanted, prios, strict=True))
    new = pin_order(wanted, current)
    after = [new.get(j, current[j]) for j in wanted]
    assert all(a > b for a, b in itertools.pairwise(after))
    assert all(PINNED_FLOOR < v <= PRIORITY_TOP for v in after)
    assert all(current[j] != v for j, v in new.items())  # only real changes


def test_a_job_inserted_in_the_middle_is_the_only_change() -> None:
    current = {"a": 1_900_000_000, "b": 1_500_000_000, "c": 1_100_000_000, "new": 90_000}
    assert list(pin_order(["a", "new", "b", "c"], current)) == ["new"]


def test_one_job_moved_to_the_front_is_the_only_change() -> None:
    current = {"a": 1_900_000_000, "b": 1_500_000_000, "c": 1_100_000_000}
    assert list(pin_order(["c", "a", "b"], current)) == ["c"]
