"""The failed cap-search memo (``Starting.cap_preempt``: a team over its ``max_gpus`` cap finds
none of its own takeable work enough to make room; the fast walk does not search again while
the pass inputs, the state's ``released`` count, the team's ``own_growth`` and the reserved nodes
are the same, and only for the very same job) against the reference, which searches every time:
after any sequence of starts, stops, ends of protections, health changes, new usage mappings and
arrivals, every cap search of every waiting job answers the same on both (the same starts and
preemptions, or none), with or without a reservation's nodes closed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.decisions import Preemption, Start
from allotment.core.placement import NodeFilter
from allotment.core.reservation import Hold
from tests.core.memo_twin import N_NODES, Change, Job, Twin, config, kept

CTX = build_context(config({"a": 8, "b": 12}), "c1")

# mostly the capped teams' own work, of several declared priorities, protected or not
job = st.tuples(st.sampled_from("aaabbc"), st.sampled_from([1, 2, 4, 4, 8]), st.integers(0, N_NODES - 1),
                st.sampled_from([1, 1, 1, 2]), st.sampled_from([True, True, True, False]), st.integers(0, 2),
                st.sampled_from([-1.0, 30.0, 200.0, 1e9]))
change = st.one_of(
    st.tuples(st.just("start"), job),
    st.tuples(st.just("stop"), st.integers(0, 40)),
    st.tuples(st.just("tick"), st.sampled_from([1, 40, 250, 600])),
    st.tuples(st.just("health"), st.integers(0, N_NODES - 1)),
    st.tuples(st.just("usage"), st.integers(0, 3)),
    st.tuples(st.just("queue"), job),
)
HELD = st.none() | st.frozensets(st.integers(0, N_NODES - 1), min_size=1, max_size=2)


def _searches(twin: Twin, held: frozenset[int] | None) -> list[object]:
    """Every waiting allocated job over its team's cap searches (best declared first, as a visit
    offers them); a search that succeeds starts its job on both."""
    out = []
    for s in twin.both:
        pi = s.inputs(twin.now, twin.usage)
        allow: NodeFilter | None = None if held is None else Hold("h", held, twin.now + 1e6, (0, -1, "x")).admit
        got: list[object] = []
        for p in sorted(s.state.pending.values(), key=lambda p: (-p.declared, p.jid)):
            if p.n == 0 or p.mr <= 0 or s.state.acct.fits_caps_of(p.aid, p.gpus):
                continue
            starts: list[Start] = []
            preemptions: list[Preemption] = []
            ok = s.starting.cap_preempt(p, s.starting.queue_key(p.queue, pi), pi, allow, starts, preemptions)
            got.append((p.jid, ok, starts, preemptions))
        out.append(got)
    assert out[0] == out[1]
    return out[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(job, max_size=10), st.lists(job, min_size=1, max_size=4), HELD, st.lists(change, max_size=14))
def test_the_kept_failures_answer_what_a_fresh_cap_search_does_after_any_changes(
    running: list[Job], pending: list[Job], held: frozenset[int] | None, changes: list[Change]
) -> None:
    twin = Twin(running, pending, CTX)
    _searches(twin, held)
    for c in changes:
        twin.change(c)
        _searches(twin, held)
        _searches(twin, None)


# a runs its cap (8) on n0: 4 preemptible and 4 protected for 30 s, all of priority 0; a
# priority-1 job of a needs 8 of them taken; b and c fill the other nodes
FULL: list[Job] = [("a", 4, 0, 1, True, 0, -1.0), ("a", 4, 0, 1, True, 0, 30.0), ("b", 8, 1, 1, True, 0, 1e9),
                   ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]
WAITS: list[Job] = [("a", 8, 0, 1, True, 1, 1e9)]


def _fails_once(twin: Twin) -> None:
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [False]
    assert kept(twin.fast)._cap_failed  # remembered
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [False]


def test_the_teams_own_work_turning_preemptible_is_read() -> None:
    twin = Twin(FULL, WAITS, CTX)
    _fails_once(twin)
    twin.change(("tick", 40))  # a's protected 4 on n0 are takeable now (own_growth): 8 in all
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [True]


def test_a_stop_frees_room_the_failure_did_not_see() -> None:
    # a's own takeable work is enough, but no node can hold 8 even so: c's job on n2 stopping
    # frees one (released)
    twin = Twin([("a", 4, 0, 1, True, 0, 30.0), ("a", 4, 1, 1, True, 0, 30.0), ("b", 4, 0, 1, True, 0, 1e9),
                 ("b", 4, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)], WAITS, CTX)
    twin.change(("tick", 40))
    _fails_once(twin)
    twin.change(("stop", 4))  # c's job on n2 (j005)
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [True]


def test_a_node_turning_healthy_gives_room_the_failure_did_not_see() -> None:
    # as above, with n2 empty but unhealthy: it turns healthy (released)
    twin = Twin([("a", 4, 0, 1, True, 0, -1.0), ("a", 4, 1, 1, True, 0, -1.0), ("b", 4, 0, 1, True, 0, 1e9),
                 ("b", 4, 1, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)], WAITS, CTX)
    twin.change(("health", 2))
    _fails_once(twin)
    twin.change(("health", 2))
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [True]


def test_the_job_queued_again_with_more_work_done_is_searched_for_again() -> None:
    # a runs its cap as one preemptible priority-1 job on n0 that ends in 3,590 s; a's waiting
    # priority-1 debug job needs 3,600 s (it would end after it: no debug slice) -- until it comes
    # back as a new pending record with 100 s done (the simulator, when a launch never happened)
    twin = Twin([("a", 8, 0, 1, True, 1, -1.0), ("b", 8, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9),
                 ("d", 8, 3, 1, True, 0, 1e9)], [("a", 8, 0, 1, True, 1, 1e9)], CTX)
    _fails_once(twin)
    for s in twin.both:
        q = s.state.take_pending("j005")
        s.state.add_pending(q.spec, q.eligible, q.queued_since, done_work=100.0, declared=q.declared)
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [True]


def test_a_failure_off_reserved_nodes_is_not_reused_for_a_search_that_may_use_them() -> None:
    # a's own takeable 8 GPUs are all on n0: off a reservation of n0 the cap search fails; a
    # search that may use n0 (no reservation) takes them
    twin = Twin([("a", 4, 0, 1, True, 0, -1.0), ("a", 4, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, 1e9),
                 ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)], WAITS, CTX)
    assert [ok for _, ok, _, _ in _searches(twin, frozenset({0}))] == [False]
    assert kept(twin.fast)._cap_failed  # remembered
    assert [ok for _, ok, _, _ in _searches(twin, None)] == [True]
