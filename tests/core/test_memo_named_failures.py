"""The failing states of the stop-48 named cases (each one guard of the failed-search memo that
no generated state had reached: ``docs/design/memos.md``), then changed at random, against the
reference: each named case changes one thing that lets its search succeed; here any sequence of
starts, stops, ticks short and long (a later debug end, a new epoch), health flips, usages (a new
mapping of the same usage: new pass inputs, the same donors), jobs queued and a pending job
queued again (more work done, or evicted by a running job) is applied to both walks, and every
pending job's searches, with and without a reservation, must agree after each.  The named cases
catch their guard on every run; this property, run three times with each guard removed (stop
48, 300 examples, no example database), caught the time and the bare-failure guard every time,
the pick's pass inputs and job identity twice, its debug end once, and a donor's changed excess
or a new donor never (each needs one particular start).  What it adds is their neighbourhood --
other starts, requeues, new inputs -- against reuses no named case thought of: 20,000 examples
with every guard in place found no disagreement."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from tests.core.memo_twin import CTX, N_NODES, Twin, change, config
from tests.core.test_memo_bare_failures import slicing_forced
from tests.core.test_memo_failed_search_terms import sliced_later
from tests.core.test_memo_kept_picks import (
    a_cheaper_node_that_fails,
    debug_slice_on_the_chosen_node,
    two_donors_on_the_chosen_node,
)

NO_DEBUG = build_context(config(debug_threshold_s=60), "c1")
DEBUG_RECLAIM = build_context(config(debug_reclaim=True), "c1")
BASES: tuple[Callable[[], Twin], ...] = (
    slicing_forced,
    sliced_later,
    debug_slice_on_the_chosen_node,
    lambda: two_donors_on_the_chosen_node(9),
    lambda: two_donors_on_the_chosen_node(8),
    lambda: a_cheaper_node_that_fails(NO_DEBUG, checkpoint=1000.0),
    lambda: a_cheaper_node_that_fails(CTX),
    lambda: a_cheaper_node_that_fails(DEBUG_RECLAIM, checkpoint=100.0),
)
account = st.sampled_from("abcd")
# a job of one node, small enough to start beside the bases' work
small = st.tuples(account, st.sampled_from([1, 2, 3, 4]), st.integers(0, N_NODES - 1), st.just(1),
                  st.sampled_from([True, True, False]), st.integers(0, 2), st.sampled_from([-1.0, 30.0, 1e9]))
more = st.one_of(
    change,
    st.tuples(st.just("start"), small),
    st.tuples(st.just("tick"), st.sampled_from([10, 30, 60, 90, 300])),
    st.tuples(st.just("requeue"), st.tuples(st.integers(0, 20), st.integers(0, 40))),
    st.tuples(st.just("same usage"), st.just(0)),
    st.tuples(st.just("wait"), st.tuples(account, st.sampled_from([2, 4, 8]), st.integers(0, 2),
                                         st.sampled_from([60.0, 150.0, 3600.0]))),
)


def _requeue(twin: Twin, k: int, by: int) -> None:
    """The ``k``-th pending job leaves the queue and comes back as a new record (as the simulator
    requeues it), evicted by a running job (or by none) and, for odd ``by``, with 5 s more done."""
    pending, running = sorted(twin.fast.state.pending), sorted(twin.fast.state.running)
    if not pending:
        return
    jid = pending[k % len(pending)]
    evictor = running[by % len(running)] if running and by % 3 else None
    for s in twin.both:
        q = s.state.take_pending(jid)
        s.state.add_pending(q.spec, q.eligible, q.queued_since, done_work=q.done_work + 5.0 * (by % 2),
                            declared=q.declared, evicted_by=evictor)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BASES) - 1), st.lists(more, max_size=8))
def test_changes_after_a_named_failure_keep_both_walks_agreeing(base: int, changes: list[tuple[str, object]]) -> None:
    twin = BASES[base]()
    queued = 0
    for c in [None, *changes]:
        if c is not None:
            kind, arg = c
            if kind == "requeue":
                _requeue(twin, *arg)  # type: ignore[misc]
            elif kind == "same usage":
                twin.usage = dict(twin.usage)  # new pass inputs, the same donors and measures
            elif kind == "wait":
                queued += 1
                twin.wait(f"q{queued}", *arg)  # type: ignore[misc]
            else:
                twin.change(c)
        for jid in sorted(twin.fast.state.pending):
            for reserve in (False, True):
                twin.search(jid, reserve)
