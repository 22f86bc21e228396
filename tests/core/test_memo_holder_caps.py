"""The fast walk's reservation holder (``Scheduler._holder_in``) brackets the caps by GPU count:
in a queue of one account with the debug overdraft off, a job at least as large as one found
beyond its caps and limits is passed over unasked, and the walk over the gangs stops once the
smallest gang is beyond.  Against the reference, which asks every job: the same holder on
generated states (caps, gangs, starving jobs, the overdraft on and off), and named cases for
each part of the bracket, so that dropping one fails them (docs/design/memos.md)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import Context, build_context
from allotment.core.jobs import JobSpec
from tests.core.memo_twin import Job, Twin, change, config, job

CTXS: tuple[Context, ...] = (
    build_context(config(max_gpus={"a": 16, "b": 8}), "c1"),
    build_context(config(max_gpus={"a": 16, "b": 8}, debug_over_cap=8), "c1"),
    build_context(config(max_gpus={"a": 16, "b": 8}), "c1", mode="priority"),
)
# a queued job: (account, GPUs per node, nodes, declared priority, work, waited for)
Queued = tuple[str, int, int, int, float, float]
queued = st.tuples(st.sampled_from(["a", "a", "b", "c"]), st.sampled_from([2, 4, 8]), st.sampled_from([1, 2, 2, 3]),
                   st.integers(0, 1), st.sampled_from([50.0, 3600.0]), st.sampled_from([0.0, 0.0, 1e6]))


def _queue(twin: Twin, q: Queued, n: int) -> None:
    account, per, nodes, declared, work, waited = q
    spec = JobSpec(id=f"q{n:03d}", submit=0.0, account=account, gpus=per * nodes, work=work, user="u",
                   min_runtime=600.0, priority=declared, gpus_per_node=per if nodes > 1 else None)
    for s in twin.both:
        s.state.add_pending(spec, twin.now - waited, twin.now - waited)


def _holders(twin: Twin) -> None:
    """The same holder on both walks, for every queue, tier 0 or not; and the smallest gang the
    bracket reads (``Shapes.least_gang_gpus``) is the queue's."""
    for q in twin.ref.state.queues.nonempty_queues():
        for s in twin.both:
            qq = s.state.queues.by_name[q.name]
            gangs = [p.gpus for p in qq.jobs if p.n > 1 and p.mr > 0]
            assert qq.shapes.least_gang_gpus() == min(gangs, default=0)
        for guaranteed in (False, True):
            got = []
            for s in twin.both:
                p = s._holder_in(s.state.queues.by_name[q.name], guaranteed, twin.now)
                got.append(None if p is None else p.jid)
            assert got[0] == got[1], (q.name, guaranteed, got)


@settings(max_examples=200, deadline=None)
@given(running=st.lists(job, max_size=8), waiting=st.lists(queued, min_size=1, max_size=10),
       changes=st.lists(change, max_size=4), which=st.integers(0, len(CTXS) - 1))
def test_the_fast_holder_is_the_references(running: list[Job], waiting: list[Queued],
                                            changes: list[tuple[str, object]], which: int) -> None:
    twin = Twin(running, ctx=CTXS[which])
    for n, q in enumerate(waiting):
        _queue(twin, q, n)
    _holders(twin)
    for c in changes:
        twin.change(c)
        _holders(twin)


def _twin(which: int, running: list[Job]) -> Twin:
    return Twin(running, ctx=CTXS[which])


def test_a_gang_beyond_the_cap_passes_over_larger_ones_not_smaller_ones() -> None:
    """b (cap 8) runs 4: its oldest gang (2 x 4) is beyond, the next (2 x 2) within."""
    twin = _twin(0, [("b", 4, 0, 1, True, 0, 1e9)])
    _queue(twin, ("b", 4, 2, 0, 3600.0, 1e6), 0)
    _queue(twin, ("b", 8, 2, 0, 3600.0, 1e5), 1)
    _queue(twin, ("b", 2, 2, 0, 3600.0, 1e4), 2)
    assert twin.ref._holder_in(twin.ref.state.queues.by_name["b"], False, twin.now).jid == "q002"  # type: ignore[union-attr]
    _holders(twin)


def test_the_walk_stops_only_once_the_smallest_gang_is_beyond() -> None:
    """b's oldest gang (2 x 4) is beyond its cap, a younger one (2 x 2) is not: the smallest
    gang is within, so the walk goes on to it."""
    twin = _twin(0, [("b", 4, 0, 1, True, 0, 1e9)])
    _queue(twin, ("b", 4, 2, 0, 3600.0, 1e6), 0)
    _queue(twin, ("b", 2, 2, 0, 3600.0, 1e4), 1)
    assert twin.ref._holder_in(twin.ref.state.queues.by_name["b"], False, twin.now).jid == "q001"  # type: ignore[union-attr]
    _holders(twin)


def test_one_accounts_cap_brackets_nothing_for_another_account() -> None:
    """In ``priority`` one queue holds every account: b's gang (2 x 4) is beyond b's cap, a's
    younger gang of the same size is within a's."""
    twin = _twin(2, [("b", 4, 0, 1, True, 0, 1e9)])
    _queue(twin, ("b", 4, 2, 0, 3600.0, 1e6), 0)
    _queue(twin, ("a", 4, 2, 0, 3600.0, 1e4), 1)
    q = twin.ref.state.queues.nonempty_queues()[0]
    assert twin.ref._holder_in(q, False, twin.now).jid == "q001"  # type: ignore[union-attr]
    _holders(twin)


def test_with_the_overdraft_on_each_job_is_asked() -> None:
    """b (cap 8) runs 6: its oldest gang (2 x 2, long) is beyond; a younger short debug gang of
    the same size is admitted by the overdraft, which reads more of a job than its size."""
    twin = _twin(1, [("b", 4, 0, 1, True, 0, 1e9), ("b", 2, 1, 1, True, 0, 1e9)])
    _queue(twin, ("b", 2, 2, 0, 1e6, 1e6), 0)
    _queue(twin, ("b", 2, 2, 0, 50.0, 1e4), 1)
    got = twin.ref._holder_in(twin.ref.state.queues.by_name["b"], False, twin.now)
    assert got is not None and got.jid == "q001"
    _holders(twin)
