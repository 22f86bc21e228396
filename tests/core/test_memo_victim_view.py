"""The victim view and its memo (``Starting.victim_view``: one ``VictimView`` per state version and
pass inputs, whose ``memo`` keeps the answers that read nothing else -- the accounts running over
what they are owed (``terms._over_owed``), each requester's donors (``terms.donors``), each
account's smallest preemptible allocated job (``futile_reclaim._smallest_job``)) against a fresh
view without a memo (the reference's): after any sequence of starts, stops, ends of protections,
health changes, new epochs and usage mappings, the view the fast walk hands a search reads the
same time and its memo gives the same answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.preemption import futile_reclaim, terms
from allotment.core.preemption.terms import Donor
from allotment.core.preemption.view import VictimView
from tests.core.memo_twin import ACCOUNTS, Change, Job, Twin, change, job


def _donors(d: dict[str, Donor]) -> dict[str, tuple[float, float]]:
    return {a: (x.over, x.measure) for a, x in d.items()}


def _answers(v: VictimView, owed: dict[str, float], measure: dict[str, float]) -> object:
    return (v.t, [(a, d.over, d.measure) for a, d in terms._over_owed(v, owed, measure)],
            {req: _donors(terms.donors(v, req, owed, measure)) for req in ACCOUNTS},
            {a: futile_reclaim._smallest_job(v, a) for a in ACCOUNTS})


def _agree(twin: Twin) -> None:
    s = twin.fast
    pi = s.inputs(twin.now, twin.usage)
    v = s.starting.victim_view(pi)
    assert v.memo is not None
    fresh = VictimView(s.state.pool, s.state.running, s.state.acct, v.keep_nonresumable, v.hysteresis, v.reclaims, pi.t, None,
                       v.debug_threshold_s)
    assert _answers(v, pi.owed, pi.measure) == _answers(fresh, pi.owed, pi.measure)


@settings(max_examples=200, deadline=None)
@given(st.lists(job, max_size=10), st.lists(change, max_size=14))
def test_the_kept_view_answers_as_a_fresh_one_after_any_changes(running: list[Job], changes: list[Change]) -> None:
    twin = Twin(running)
    _agree(twin)
    for c in changes:
        twin.change(c)
        _agree(twin)


def test_an_account_starting_past_what_it_is_owed_turns_donor() -> None:
    twin = Twin([("b", 4, 0, 1, True, 0, -1.0)])
    _agree(twin)  # b runs 4 of the 8 it is owed: no donor
    twin.change(("start", ("b", 8, 1, 1, True, 0, -1.0)))
    _agree(twin)


def test_a_new_epoch_is_read_by_the_view() -> None:
    twin = Twin([("b", 8, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, -1.0)])
    _agree(twin)
    twin.change(("usage", 1))  # b served least now: no donor to anyone
    _agree(twin)
    twin.change(("tick", 300))  # the same mapping, a new epoch: the view's time moves
    _agree(twin)
