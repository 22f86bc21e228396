"""The reported reservations (``Scheduler._reservation``: the pass's ``Reservation`` records,
kept by the fast walk, ``fast_walk.Kept.reservations``, while the holds are the same holder, nodes
and start) against making them afresh from the pass's holds, and against the reference's, which
keeps none: after passes at any times between any starts, stops, ticks,
health changes and arrivals (gangs among them, which hold reservations), the records a pass
reports are the ones its holds make, and the fast walk's passes report what the reference's do."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.memo_twin import Change, Job, Twin, change, job
from tests.core.memo_twin import kept as kept_memo

gang = st.tuples(st.sampled_from("abcd"), st.sampled_from([4, 8]), st.integers(0, 3), st.just(2), st.just(True),
                 st.integers(0, 2), st.just(1e9))


def _pass(twin: Twin) -> None:
    got = [s.run_pass(twin.now, twin.usage) for s in twin.both]
    assert got[0] == got[1]
    kept = twin.fast._reservation()
    kept_memo(twin.fast).keep_reservations((), ())  # forget the kept records: made afresh from the holds
    assert twin.fast._reservation() == kept
    assert twin.ref._reservation() == kept  # the reference keeps nothing (core.fast_walk.Memos)


@settings(max_examples=100, deadline=None)
@given(st.lists(job, max_size=8), st.lists(gang, min_size=1, max_size=3), st.lists(change, max_size=10))
def test_the_kept_records_are_the_ones_the_holds_make(running: list[Job], gangs: list[Job], changes: list[Change]) -> None:
    twin = Twin(running, gangs)
    _pass(twin)
    for c in changes:
        twin.change(c)
        _pass(twin)


def test_a_reservation_that_moves_its_start_is_reported_anew() -> None:
    # a's gang holds n0 and n1 until b's jobs there end (n1's 100 s after n0's); n1's job stops
    # early: the same holder on the same nodes, from n0's end on
    twin = Twin([("b", 8, 0, 1, True, 0, 1e9)], [("a", 8, 0, 2, True, 0, 1e9)])
    twin.change(("tick", 100))
    for j in [("b", 8, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]:
        twin.change(("start", j))
    _pass(twin)
    before = twin.fast.starting.holds
    assert before is not None and sorted(before.items[0].nodes) == [0, 1]
    twin.change(("stop", 1))  # j003, b's job on n1
    _pass(twin)
    after = twin.fast.starting.holds
    assert after is not None and after.items[0].nodes == before.items[0].nodes
    assert after.items[0].at < before.items[0].at
