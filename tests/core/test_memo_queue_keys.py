"""The queue-key memo (``Scheduler._round_key``: a queue's (tier, rank, name) key and its order
as one integer, kept by the fast walk for the same pass inputs, the same queue names and the
same allocated GPUs of the queue's account) against the reference, which computes both on every
call: after any sequence of starts and stops (a team crosses what it is owed: its tier turns),
new epochs and usage mappings (the ranks turn), health changes (what is owed scales) and jobs
queued in queues new to the scheduler (the names are dealt again), both give the same key and
the same order for every queue."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.memo_twin import Change, Job, Twin, change, job


def _keys(twin: Twin) -> list[tuple[object, ...]]:
    out = []
    for s in twin.both:
        pi = s.inputs(twin.now, twin.usage)
        got = []
        for q in s.state.queues.nonempty_queues():
            k = s._round_key(q, pi)
            got.append((q.name, k.key, k.order))
        out.append(got)
    assert out[0] == out[1]
    return out[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(job, max_size=8), st.lists(job, min_size=1, max_size=6), st.lists(change, max_size=14))
def test_the_kept_keys_are_the_recomputed_ones_after_any_changes(running: list[Job], pending: list[Job],
                                                                changes: list[Change]) -> None:
    twin = Twin(running, pending)
    _keys(twin)
    for c in changes:
        twin.change(c)
        _keys(twin)


def test_a_team_that_starts_past_what_it_is_owed_drops_a_tier() -> None:
    # a is owed 8 of 32 GPUs; its queue's key is kept, then it runs 16 in the same pass inputs
    twin = Twin([], [("a", 8, 0, 1, True, 0, 1e9)])
    before = _keys(twin)
    twin.change(("start", ("a", 8, 0, 2, True, 0, 1e9)))
    assert _keys(twin) != before


def test_a_queue_new_to_the_scheduler_deals_the_names_again() -> None:
    twin = Twin([], [("b", 8, 0, 1, True, 0, 1e9), ("d", 8, 0, 1, True, 0, 1e9)])
    _keys(twin)
    twin.change(("queue", ("c", 8, 0, 1, True, 0, 1e9)))  # c sorts between b and d
    _keys(twin)
