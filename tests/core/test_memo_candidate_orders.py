"""Each queue's kept candidate order (``core.candidates``, as the scheduler keeps it:
``Scheduler._candidates`` over ``QueueSet.version``, ``Accounting.user_version``, the epoch, the
load, the dependants map and the best node's free GPUs) against the reference's whole-queue
scoring (``Scorer.best`` and ``Scorer.rank`` each visit), driven through the scheduler's own state
changes rather than by hand: after any sequence of starts and stops (a user's running GPUs move
its jobs' fairness; the best node's free GPUs move their fit), new epochs (ages), arrivals and a
new dependants map, both offer the same candidates and the same whole order for every queue.
``tests/core/test_candidates.py`` checks ``CandidateOrders`` itself with the versions passed in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.jobs import JobSpec
from allotment.core.priority import dependants
from tests.core.memo_twin import Change, Job, Twin, change, job, orders

# pending work of all sizes and users of two teams, to be reordered by fairness and fit
waiting = st.tuples(st.sampled_from("ab"), st.sampled_from([1, 2, 4, 8]), st.just(0), st.just(1), st.just(True),
                    st.integers(0, 2), st.just(1e9))


def _orders(twin: Twin) -> list[object]:
    out = []
    for s in twin.both:
        pi = s.inputs(twin.now, twin.usage)
        got = []
        for q in s.state.queues.nonempty_queues():
            cands = s._candidates(q, pi, set())
            got.append((q.name, [p.jid for p in cands], [p.jid for p in s._whole_order(q, pi)]))
        out.append(got)
    assert out[0] == out[1]
    return out[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(job, max_size=6), st.lists(waiting, min_size=1, max_size=12), st.lists(change, max_size=14),
       st.booleans())
def test_the_kept_orders_are_the_whole_queue_scoring_after_any_changes(running: list[Job], pending: list[Job],
                                                                       changes: list[Change], merged: bool) -> None:
    twin = Twin(running, pending)
    if merged:  # every queue merged by runs of equal epoch-static score (core.fairness_merge), not only long ones
        orders(twin.fast).small = 2
    _orders(twin)
    for c in changes:
        twin.change(c)
        _orders(twin)


def test_a_user_starting_work_moves_their_waiting_jobs_behind_another_users() -> None:
    # a's jobs of users x (older) and y, alike but for their age: x starts 8 GPUs of other work
    twin = Twin()
    for k, user in enumerate(("x", "y")):
        spec = JobSpec(id=f"p{k}", submit=0.0, account="a", gpus=1, work=600.0, user=user, min_runtime=600.0)
        for s in twin.both:
            s.state.add_pending(spec, twin.now + k, twin.now + k)
    before = _orders(twin)
    busy = JobSpec(id="r", submit=0.0, account="a", gpus=8, work=3600.0, user="x", min_runtime=600.0)
    for s in twin.both:
        s.state.add_running(busy, twin.now, (("n0", 8),), allocated=True, protected_until=1e9)
    assert _orders(twin) != before


def test_the_best_node_freeing_up_lets_the_large_jobs_fit_again() -> None:
    # every node half full: a's 8-GPU job does not fit and sorts behind its 4-GPU one; a stop
    # frees a whole node, and only the fit moved
    twin = Twin([("b", 4, k, 1, True, 0, 1e9) for k in range(4)],
                [("a", 8, 0, 1, True, 0, 1e9), ("a", 4, 0, 1, True, 0, 1e9)])
    before = _orders(twin)
    twin.change(("stop", 0))
    twin.change(("stop", 0))
    assert twin.fast.state.pool.max_free() == 8
    assert _orders(twin) != before


@pytest.mark.parametrize("merged", [False, True])
def test_a_new_dependants_map_lends_a_prerequisite_its_dependants_score(merged: bool) -> None:
    twin = Twin([], [("a", 1, 0, 1, True, 0, 1e9), ("a", 1, 0, 1, True, 1, 1e9)])  # j001 (priority 0), j002
    if merged:
        orders(twin.fast).small = 2
    before = _orders(twin)
    # a priority-2 job, not yet queued, waits for j001: j001 is scored by it now
    dep = JobSpec(id="w", submit=0.0, account="a", gpus=1, work=600.0, user="u2", priority=2, depends_on=("j001",))
    for s in twin.both:
        s.state.dependants = dependants([*(p.spec for p in s.state.pending.values()), dep])
    assert _orders(twin) != before


def test_a_user_whose_work_stops_moves_their_waiting_jobs_ahead_again() -> None:
    twin = Twin()
    busy = JobSpec(id="r", submit=0.0, account="a", gpus=8, work=3600.0, user="x", min_runtime=600.0)
    for s in twin.both:
        s.state.add_running(busy, twin.now, (("n0", 8),), allocated=True, protected_until=1e9)
    for k, user in enumerate(("x", "y")):
        spec = JobSpec(id=f"p{k}", submit=0.0, account="a", gpus=1, work=600.0, user=user, min_runtime=600.0)
        for s in twin.both:
            s.state.add_pending(spec, twin.now + k, twin.now + k)
    before = _orders(twin)
    for s in twin.both:
        s.state.finish("r")  # x runs nothing now: x's older job goes first again
    assert _orders(twin) != before


def test_a_job_taken_out_of_its_queue_is_offered_no_more() -> None:
    twin = Twin([], [("a", 1, 0, 1, True, 0, 1e9), ("a", 1, 0, 1, True, 1, 1e9)])
    before = _orders(twin)
    for s in twin.both:
        s.state.take_pending("j002")  # as the simulator does for a requeue delay: only the queue changes
    assert _orders(twin) != before
