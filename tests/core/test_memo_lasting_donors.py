"""A lasting failure that read donors, kept while the donors of now are among those it read
(``retry.Failure.donors``, ``victims.still_fails``'s ``within``), across new pass inputs too.
Against the reference, which keeps nothing: the property drives one state under both walks
(``memo_twin``) through starts, stops, ticks, health, queued jobs and, often, another window
usage (new pass inputs: every account's measure moves, and with it who is a donor), and asks
every pending job's searches after each change; the named cases show the failure kept into new
inputs, and searched again when an account turns donor -- by new inputs, or by a start within
the same ones."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import allotment.core.starting as starting
from allotment.core.preemption.victims import find_victims
from tests.core.memo_twin import ACCOUNTS, USAGES, Change, Job, Twin, change, failed, job

# usage changes drawn as often as every other change together
changes = st.lists(st.one_of(change, st.tuples(st.just("usage"), st.integers(0, len(USAGES) - 1))), max_size=14)
# running work mostly preemptible at once, in whole nodes and halves: whoever turns donor frees nodes
work = st.tuples(st.sampled_from(ACCOUNTS), st.sampled_from([4, 8]), st.integers(0, 3), st.just(1), st.just(True),
                 st.just(0), st.sampled_from([-1.0, -1.0, 1e9]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(work | job, min_size=3, max_size=10), st.lists(job, min_size=1, max_size=4), changes)
def test_a_lasting_failure_kept_on_its_donors_answers_what_the_search_does(
    running: list[Job], pending: list[Job], changes: list[Change]
) -> None:
    twin = Twin(running, pending)
    twin.replay(changes)


# b runs 16 (twice what it is owed): 8 preemptible on n0, 8 protected on n1; c and d run what
# they are owed, protected; a runs nothing and waits for a whole node (j005)
B_OVER: list[Job] = [("b", 8, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9),
                     ("d", 8, 3, 1, True, 0, 1e9)]
A_WAITS: list[Job] = [("a", 8, 0, 1, True, 0, 1e9)]


def _counting(monkeypatch: object) -> list[str]:
    """The fast walk's searches for ``find_victims``, by job."""
    searched: list[str] = []

    def counted(v: object, p: object, *a: object, **k: object) -> object:
        if v.memo is not None:  # type: ignore[attr-defined]
            searched.append(p.jid)  # type: ignore[attr-defined]
        return find_victims(v, p, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(starting, "find_victims", counted)  # type: ignore[attr-defined]
    return searched


def _a_fails_with_b_no_donor() -> Twin:
    """Under ``USAGES[1]`` a was served more than b over the window: b is no donor, nothing
    else is takeable, and a's searches (with and without a reservation) fail for good (having
    read the donors: a may reclaim)."""
    twin = Twin(B_OVER, A_WAITS)
    twin.change(("usage", 1))
    for reserve in (True, False):
        assert twin.search("j005", reserve) is None
    for f in failed(twin.fast).entries():
        assert f.why.lasting and f.why.reclaim and f.donors == {}
    return twin


def test_a_lasting_failure_that_read_donors_is_kept_into_new_inputs_with_no_new_donor(monkeypatch: object) -> None:
    """New pass inputs (``USAGES[2]``: nobody served more than anybody) leave b no donor: the
    failure is kept, not searched again (before stop 45 every failure that read donors was
    dropped with the inputs it was found under).  The first answer kept is remembered under
    the new inputs, which keeps the other one only if a failure that read donors is kept into
    new inputs (``FailedSearches._keeps``)."""
    twin = _a_fails_with_b_no_donor()
    searched = _counting(monkeypatch)
    twin.change(("usage", 2))
    for reserve in (True, False):
        assert twin.search("j005", reserve) is None
    assert searched == []


def test_an_account_turning_donor_with_new_inputs_makes_the_failure_search_again() -> None:
    """New pass inputs (``USAGES[0]``: b served far more than a) make b a donor: its
    preemptible job on n0 frees the node, which no node grew to show."""
    twin = _a_fails_with_b_no_donor()
    twin.change(("usage", 0))
    assert twin.search("j005") == [("j001", "reclaim")]


def test_an_account_turning_donor_within_the_inputs_makes_the_failure_search_again() -> None:
    """Under ``USAGES[0]`` b is served more, but runs only what it is owed: no donor, and a
    fails for good (n1 has 4 free GPUs beside c's protected 4, nothing else is takeable).  Then
    b starts a protected 4-GPU job on n1 within the same inputs: b runs over what it is owed and
    turns donor with its preemptible job on n0 (``donor_growth``), though no node grew."""
    running: list[Job] = [B_OVER[0], ("c", 4, 1, 1, True, 0, 1e9), ("d", 8, 2, 1, True, 0, 1e9),
                          ("d", 8, 3, 1, True, 0, 1e9)]
    twin = Twin(running, A_WAITS)
    assert twin.search("j005") is None
    (f,) = failed(twin.fast).entries()
    assert f.why.lasting and f.why.reclaim and f.donors == {}
    twin.change(("start", ("b", 4, 1, 1, True, 0, 1e9)))
    assert twin.search("j005") == [("j001", "reclaim")]
