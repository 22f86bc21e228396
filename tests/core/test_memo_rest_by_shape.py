"""The fast walk's list for ``_free_work_for_the_rest`` (``Scheduler._rest_that_may_take``)
against its definition on the reference: every job of the queue's whole order (``_whole_order``,
``Scorer.rank`` of the queue) that the loop would search for -- not tried, placeable, allocated,
within its caps and limits -- and whose search for unallocated work, made on the reference (no
memo), finds victims.  The fast list searches once per (shape, nodes its filter holds it off) and
ranks only the jobs left; the property runs it on generated states with unallocated work, holds
and the session pool, and the named cases pin each part of the key and the ranking, so that
dropping one fails them (docs/design/memos.md)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.core.context import build_context
from allotment.core.decisions import Preemption, Start
from allotment.core.jobs import JobSpec
from allotment.core.preemption.view import Victim
from allotment.core.reservation import Hold, Holds
from allotment.core.scheduler import Scheduler
from tests.core.memo_twin import ACCOUNTS, N_NODES, Job, Twin, change, config, job

# a queued job: (account, GPUs per node, nodes, declared priority, user, work)
Queued = tuple[str, int, int, int, int, float]
queued = st.tuples(st.sampled_from(ACCOUNTS), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 1, 2]),
                   st.integers(0, 1), st.integers(0, 2), st.sampled_from([50.0, 3600.0, 1e6]))

POOL_CTX = build_context(config(interactive=InteractiveClass(pool_nodes=1)), "c1")


def _queue(twin: Twin, q: Queued, n: int) -> None:
    account, per, nodes, declared, user, work = q
    spec = JobSpec(id=f"q{n:03d}", submit=0.0, account=account, gpus=per * nodes, work=work, user=f"u{user}",
                   min_runtime=600.0, priority=declared, gpus_per_node=per if nodes > 1 else None)
    for s in twin.both:
        s.state.add_pending(spec, twin.now, twin.now)


def _hold(twin: Twin, nodes: frozenset[int] | None, after: float) -> None:
    for s in twin.both:
        s.starting.holds = None if nodes is None else Holds((Hold("holder", nodes, twin.now + after, (0, -1, "x")),))


def _definition(s: Scheduler, q: str, now: float, usage: object, tried: set[str]) -> list[str]:
    """The ids ``_free_work_for_the_rest`` could start, in its order, on the reference ``s``."""
    pi = s.inputs(now, usage)  # type: ignore[arg-type]
    qk = s.starting.queue_key(q, pi)
    out = []
    for p in s._whole_order(s.state.queues.by_name[q], pi):
        if p.jid in tried or p.n == 0 or p.mr <= 0 or not s._within_caps_and_limits(p):
            continue
        if s.starting.victims_for(p, qk, pi, s._soft_filter(p, qk, now), True, False) is not None:
            out.append(p.jid)
    return out


def _fast(s: Scheduler, q: str, now: float, usage: object, tried: set[str]) -> list[str]:
    pi = s.inputs(now, usage)  # type: ignore[arg-type]
    return [p.jid for p in s._rest_that_may_take(s.state.queues.by_name[q], s.starting.queue_key(q, pi), pi, tried, {})]


def _rest_decides(twin: Twin, tried_first: int = 0) -> None:
    """``_free_work_for_the_rest`` itself on both walks, queue by queue: the same start and the
    same preemptions, reasons included (the fast walk starts with the victims its list found)."""
    for q in twin.ref.state.queues.nonempty_queues():
        if q.free:
            continue
        pi = twin.ref.inputs(twin.now, twin.usage)
        tried = {p.jid for p in twin.ref._whole_order(q, pi)[:tried_first]}
        got = []
        for s in twin.both:
            pi = s.inputs(twin.now, twin.usage)
            starts: list[Start] = []
            preemptions: list[Preemption] = []
            ok = s._free_work_for_the_rest(s.state.queues.by_name[q.name], s.starting.queue_key(q.name, pi), pi, set(tried), starts,
                                           preemptions)
            got.append((ok, starts, preemptions))
        assert got[0] == got[1], q.name


def _found(twin: Twin, q: str = "a") -> dict[str, list[Victim]]:
    """The victims the fast list found, by the job searched."""
    pi = twin.fast.inputs(twin.now, twin.usage)
    found: dict[str, list[Victim]] = {}
    twin.fast._rest_that_may_take(twin.fast.state.queues.by_name[q], twin.fast.starting.queue_key(q, pi), pi, set(), found)
    return found


def _check(twin: Twin, tried_first: int) -> None:
    for q in twin.ref.state.queues.nonempty_queues():
        if q.free:
            continue
        pi = twin.ref.inputs(twin.now, twin.usage)
        tried = {p.jid for p in twin.ref._whole_order(q, pi)[:tried_first]}
        want = _definition(twin.ref, q.name, twin.now, twin.usage, tried)
        assert _fast(twin.fast, q.name, twin.now, twin.usage, tried) == want, q.name


@settings(max_examples=150, deadline=None)
@given(running=st.lists(job, max_size=10), waiting=st.lists(queued, min_size=1, max_size=12),
       changes=st.lists(change, max_size=4), held=st.one_of(st.none(), st.frozensets(st.integers(0, N_NODES - 1),
                                                                                       min_size=1, max_size=2)),
       after=st.sampled_from([100.0, 1e5]), pool=st.booleans(), tried_first=st.integers(0, 3))
def test_the_rest_listed_by_shape_is_the_whole_order_of_the_jobs_whose_search_succeeds(
    running: list[Job], waiting: list[Queued], changes: list[tuple[str, object]], held: frozenset[int] | None,
    after: float, pool: bool, tried_first: int,
) -> None:
    twin = Twin(running, ctx=POOL_CTX) if pool else Twin(running)
    for n, q in enumerate(waiting):
        _queue(twin, q, n)
    for c in changes:
        twin.change(c)
    _hold(twin, held, after)
    _check(twin, tried_first)
    for s in twin.both:  # and again after a pass (its holds, its starts)
        s.run_pass(twin.now, twin.usage)
    _check(twin, tried_first)
    _rest_decides(twin, tried_first)


# n0 and n1 each run 4 GPUs of unallocated work beside 4 protected ones; n2, n3 are full
HALF_FREE: list[Job] = [("b", 4, 0, 1, False, 0, 1e9), ("c", 4, 0, 1, True, 0, 1e9),
                        ("b", 4, 1, 1, False, 0, 1e9), ("c", 4, 1, 1, True, 0, 1e9),
                        ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]


def test_a_job_of_another_shape_is_searched_for_itself() -> None:
    """An 8-GPU job finds no node with 8 takeable GPUs; a 4-GPU job of the same queue, after
    it, does (the key's shape)."""
    twin = Twin(HALF_FREE)
    _queue(twin, ("a", 8, 1, 1, 0, 3600.0), 0)
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 1)
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001"]
    _check(twin, 0)


def test_a_job_the_hold_keeps_off_its_node_decides_nothing_for_one_it_does_not() -> None:
    """Two 4-GPU jobs; a hold on n0 and n1 keeps the first (it would run past the hold's start)
    off the only nodes with unallocated work; the second ends before it and may go there (the
    key's held nodes)."""
    twin = Twin(HALF_FREE)
    _queue(twin, ("a", 4, 1, 1, 0, 1e6), 0)
    _queue(twin, ("a", 4, 1, 0, 0, 50.0), 1)
    _hold(twin, frozenset({0, 1}), 1e5)
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001"]
    _check(twin, 0)


def test_the_jobs_left_keep_the_whole_order_not_the_queues() -> None:
    """Two 4-GPU jobs of equal declared priority, queued in id order; the first's user already
    runs a's GPUs, so the within-team score puts the second first (the ranking)."""
    twin = Twin([*HALF_FREE[:4], ("a", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)])
    for s in twin.both:  # a's running job is u0's (Twin names users by declared priority)
        assert s.state.running["j005"].spec.user == "u0"
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    _queue(twin, ("a", 4, 1, 0, 1, 3600.0), 1)
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001", "q000"]
    _check(twin, 0)


def test_a_mode_that_does_not_score_keeps_the_queues_order() -> None:
    """In ``priority`` (one queue, submission order) the jobs left are not ranked by a score:
    the later job declares the higher priority, which only a scorer would read."""
    twin = Twin(HALF_FREE, ctx=build_context(config(), "c1", mode="priority"))
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    _queue(twin, ("b", 4, 1, 1, 1, 3600.0), 1)
    q = twin.ref.state.queues.nonempty_queues()[0].name
    assert _definition(twin.ref, q, twin.now, twin.usage, set()) == ["q000", "q001"]
    _check(twin, 0)


def test_the_victims_found_start_only_the_job_they_were_found_for() -> None:
    """The ranking case above: the list searched q000 (first in the queue's order), the loop
    starts q001 (first by the score), whose victims' reasons name q001 -- found by its own
    search, not handed q000's."""
    twin = Twin([*HALF_FREE[:4], ("a", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)])
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    _queue(twin, ("a", 4, 1, 0, 1, 3600.0), 1)
    assert _fast(twin.fast, "a", twin.now, twin.usage, set()) == ["q001", "q000"]
    assert list(_found(twin)) == ["q000"]
    _rest_decides(twin)


def test_the_victims_found_for_one_shape_are_not_handed_to_another() -> None:
    """q000 (4 GPUs, u0, who runs a's work) is searched first and would take b's 4 GPUs on n1;
    q001 (2 GPUs, u1) ranks first by the score and takes b's 2 GPUs on n0 by its own search."""
    twin = Twin([("b", 2, 0, 1, False, 0, 1e9), ("c", 6, 0, 1, True, 0, 1e9), ("b", 4, 1, 1, False, 0, 1e9),
                 ("c", 4, 1, 1, True, 0, 1e9), ("a", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)])
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    _queue(twin, ("a", 2, 1, 0, 1, 3600.0), 1)
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001", "q000"]
    assert sorted(_found(twin)) == ["q000", "q001"]  # each searched for itself: two shapes
    _rest_decides(twin)


def test_the_victims_found_are_the_ones_a_second_search_finds() -> None:
    """One job whose search succeeds: the loop starts it with the victims the list found, and
    the decisions (victims, reasons) are the reference's."""
    twin = Twin(HALF_FREE)
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    assert list(_found(twin)) == ["q000"]
    _rest_decides(twin)


# a runs 4 protected GPUs on n1 beside b's unallocated 4; its cap is 8
CAPPED: list[Job] = [("b", 4, 0, 1, False, 0, 1e9), ("c", 4, 0, 1, True, 0, 1e9),
                     ("b", 4, 1, 1, False, 0, 1e9), ("a", 4, 1, 1, True, 0, 1e9),
                     ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]


def test_a_job_over_its_cap_decides_nothing_for_a_smaller_one_of_its_account() -> None:
    """a's 8-GPU job is over its cap (4 + 8 > 8), its 4-GPU job within (4 + 4): the caps are
    asked per GPU count, not once per account."""
    ctx = build_context(config(max_gpus={"a": 8}), "c1")
    twin = Twin(CAPPED, ctx=ctx)
    _queue(twin, ("a", 8, 1, 1, 0, 3600.0), 0)
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 1)
    assert not twin.ref._within_caps_and_limits(twin.ref.state.pending["q000"])
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001"]
    _check(twin, 0)


def test_a_job_within_its_cap_decides_nothing_for_a_larger_one_of_its_account() -> None:
    """The other way round: a's 2-GPU job is within its cap (4 + 2 <= 8), its 8-GPU job is not,
    though b's unallocated 8 GPUs on n0 would make room for either."""
    ctx = build_context(config(max_gpus={"a": 8}), "c1")
    twin = Twin([("b", 8, 0, 1, False, 0, 1e9), ("a", 4, 1, 1, True, 0, 1e9), ("c", 4, 1, 1, True, 0, 1e9),
                 ("c", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)], ctx=ctx)
    _queue(twin, ("a", 2, 1, 1, 0, 3600.0), 0)
    _queue(twin, ("a", 8, 1, 0, 0, 3600.0), 1)
    assert not twin.ref._within_caps_and_limits(twin.ref.state.pending["q001"])
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q000"]
    _check(twin, 0)


def test_an_accounts_cap_decides_nothing_for_another_accounts_job_of_its_size() -> None:
    """In ``priority`` one queue holds every account: a's 4-GPU job is over a's cap (a runs its 8),
    b's 4-GPU job is not (the caps are asked per account too)."""
    ctx = build_context(config(max_gpus={"a": 8}), "c1", mode="priority")
    twin = Twin([("b", 4, 0, 1, False, 0, 1e9), ("c", 4, 0, 1, True, 0, 1e9), ("b", 4, 1, 1, False, 0, 1e9),
                 ("c", 4, 1, 1, True, 0, 1e9), ("a", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)], ctx=ctx)
    _queue(twin, ("a", 4, 1, 0, 0, 3600.0), 0)
    _queue(twin, ("b", 4, 1, 0, 0, 3600.0), 1)
    q = twin.ref.state.queues.nonempty_queues()[0].name
    assert _definition(twin.ref, q, twin.now, twin.usage, set()) == ["q001"]
    _check(twin, 0)


def test_with_the_overdraft_on_each_job_is_asked_its_caps() -> None:
    """a's long job of 4 GPUs is over its cap (4 + 4 > 6); its short debug job of 4 GPUs is
    admitted beyond it by the overdraft, which reads more of a job than its account and size."""
    ctx = build_context(config(max_gpus={"a": 6}, debug_over_cap=8), "c1")
    twin = Twin(CAPPED, ctx=ctx)
    _queue(twin, ("a", 4, 1, 1, 0, 1e6), 0)
    _queue(twin, ("a", 4, 1, 0, 0, 50.0), 1)
    assert _definition(twin.ref, "a", twin.now, twin.usage, set()) == ["q001"]
    _check(twin, 0)
