"""``Scheduler._room``: the fast walk keeps the last ``Room`` (what its skip tests read of the
reservations, the free GPUs and the session pool) while the holds object, the pool's version and
the time are the same, and it must then be exactly what ``_fresh_room`` computes afresh.  A
round asks it of every queue it may skip: most queues, most rounds (docs/benchmarks.md,
"Stop 42")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.reservation import Hold, Holds
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.walk import FAST, Room
from tests.core.builders import make_config

NODES = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))


def _fields(r: Room) -> tuple[int, float, int, bool]:
    return (r.open_free, r.until, r.lent, r.consolidates)


def _same(s: Scheduler, now: float) -> None:
    """The kept room, asked as a round asks it of each queue in turn (in tiers 0 and 1), against
    a fresh one: with more than one hold, each queue's own (``Holds.binding``)."""
    hs = s.starting.holds
    names = max(1, len(s.state.queues.queues))
    for tier in (0, 1):
        for k in range(len(s.state.queues.by_rank)):
            o = tier * names + k  # ranks = 1: (tier * ranks + 0) * names + k
            assert _fields(s._room(hs, o, names, 1, now)) == _fields(s._fresh_room(hs, o, names, 1, now))


job = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from([1, 2, 4, 8, 16, 24]),  # 16 and 24: gangs, which hold reservations
    st.sampled_from(["batch", "interactive"]),
    st.sampled_from([0.0, 600.0]),  # minimum runtime (0: unallocated-eligible)
    st.sampled_from([600.0, 3600.0, 7200.0]),  # work
    st.sampled_from([0.0, 0.0, 60.0, 300.0]),  # gap after the previous arrival
)


@settings(max_examples=80, deadline=None)
@given(jobs=st.lists(job, min_size=1, max_size=16), pool=st.sampled_from([0, 1, 2]),
       consolidate=st.booleans(), sick=st.lists(st.booleans(), min_size=16, max_size=16),
       reservations=st.sampled_from([1, 2]))
def test_the_kept_room_is_the_room_computed_afresh(
    jobs: list[tuple[str, int, str, float, float, float]], pool: int, consolidate: bool, sick: list[bool],
    reservations: int,
) -> None:
    policy = Policy(interactive=InteractiveClass(pool_nodes=pool), consolidate=consolidate,
                    reservations=reservations)
    ctx = build_context(make_config({"a": 2, "b": 1}, nodes=4, policy=policy), "c1")
    s = Scheduler(ctx, NODES, walk=FAST)
    now = 0.0
    ends: dict[str, float] = {}
    for k, (a, g, kind, mr, w, gap) in enumerate(jobs):
        _same(s, now)  # kept from the last pass, at the same time
        now += gap
        _same(s, now)  # a later time, nothing else changed
        for jid in [j for j, e in ends.items() if e <= now and j in s.state.running]:
            s.state.finish(jid)
            del ends[jid]
        if sick[k]:  # a node's health flips
            name = NODES[k % len(NODES)].name
            s.state.set_health(name, not s.state.pool.healthy[s.state.pool.index[name]], now)
        _same(s, now)  # after jobs ended and health changed
        s.state.add_pending(JobSpec(id=f"j{k:02d}", submit=now, account=a, gpus=g, work=w, min_runtime=mr, user="u",
                              kind=kind, checkpoint_interval=600.0), now, now)
        d = s.run_pass(now, {})
        for st_ in d.starts:
            ends[st_.job_id] = now + s.state.running[st_.job_id].spec.work
        _same(s, now)  # after the pass's starts, preemptions and new holds


def test_with_two_holds_each_queue_gets_the_room_of_the_holds_that_bind_it() -> None:
    # the second hold binds only queues ranked no better than its holder's (``Holds.binding``):
    # the queue ranked before it may still start before its later start, the one after may not
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=4, policy=Policy(reservations=2)), "c1")
    s = Scheduler(ctx, NODES, walk=FAST)
    for k, a in enumerate(("a", "b")):
        s.state.add_pending(JobSpec(id=f"j{k}", submit=0.0, account=a, gpus=1, work=3600.0, user="u"), 0.0, 0.0)
    by_rank = s.state.queues.by_rank
    assert len(by_rank) == 2
    first, second = (0, 0, by_rank[0].name), (0, 0, by_rank[1].name)
    hs = Holds((Hold("x", frozenset({0}), 100.0, first), Hold("y", frozenset({1}), 500.0, second)))
    bound, unbound = 1, 0  # round orders (ranks = 1, names = 2): the second queue, then the first
    got = [_fields(s._room(hs, o, 2, 1, 0.0)) for o in (bound, unbound)]
    assert got == [_fields(s._fresh_room(hs, o, 2, 1, 0.0)) for o in (bound, unbound)]
    assert got[0][1] == 500.0 and got[1][1] == 100.0
