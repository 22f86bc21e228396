"""The count a victim search for unallocated work alone is bounded by (``NodePool.soft_reaching``:
healthy nodes whose free GPUs plus those of unallocated work reach ``per``), kept by the pool as
jobs start and stop and nodes change health, against the count from scratch; and
``find_victims``'s answer with that bound against its answer without it, for gangs as for one
node (the bound must only ever return what the full search would)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.placement import NodePool
from allotment.core.preemption import victims
from allotment.core.preemption.view import NoVictims, VictimView
from allotment.core.reservation import Hold
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from tests.core.test_futile_reclaim import (
    NODES,
    T0,
    USAGES,
    Job,
    Search,
    _answer,
    _state,
    job,
    search,
)

POOL_NODES = tuple(NodeState(f"n{i}", 8 if i % 3 else 4) for i in range(5))

# a change: ("start", node, GPUs, unallocated) / ("stop", pick, ...) / ("health", node, healthy)
change = st.one_of(
    st.tuples(st.just("start"), st.integers(0, 4), st.integers(1, 8), st.booleans()),
    st.tuples(st.just("stop"), st.integers(0, 40), st.just(0), st.just(False)),
    st.tuples(st.just("health"), st.integers(0, 4), st.just(0), st.booleans()),
)


def _from_scratch(pool: NodePool, per: int) -> int:
    return sum(1 for i in range(len(pool.names)) if pool.healthy[i] and pool.free[i] + pool.soft[i] >= per)


@contextmanager
def maps_read() -> Iterator[list[int]]:
    """Counts the victim search's map reads (``_freeable_hosts``) inside the block."""
    read: list[int] = []
    was = victims._freeable_hosts

    def spy(*a: object, **k: object) -> list[int]:
        read.append(1)
        return was(*a, **k)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(victims, "_freeable_hosts", spy)
        yield read


@settings(max_examples=300, deadline=None)
@given(st.lists(change, max_size=40))
def test_soft_reaching_is_the_count_from_scratch_after_any_changes(changes: list[tuple[str, int, int, bool]]) -> None:
    pool = NodePool(POOL_NODES)
    running: dict[str, tuple[tuple[tuple[int, int], ...], bool]] = {}
    for k, (what, a, gpus, flag) in enumerate(changes):
        if what == "start" and pool.free[a] >= gpus:
            pl = ((a, gpus),)
            pool.allocate(f"j{k}", pl, soft=flag)
            running[f"j{k}"] = (pl, flag)
        elif what == "stop" and running:
            jid = sorted(running)[a % len(running)]
            pl, soft = running.pop(jid)
            pool.release(jid, pl, soft=soft)
        elif what == "health":
            pool.set_health(a, flag)
        for per in range(pool.max_gpus + 2):
            assert pool.soft_reaching(per) == _from_scratch(pool, per), (per, changes[: k + 1])


def test_a_gang_of_unallocated_work_alone_fails_on_the_count_before_any_map_is_read() -> None:
    """Two nodes have 2 GPUs of unallocated work each and nothing free; the others are full of
    protected allocated work: a search for unallocated work only, for a 2-node gang of 4 per
    node, finds at most 0 such nodes and fails lasting without merging a map."""
    running: list[Job] = [("a", 6, 0, 1, True, 0, 1e9), ("b", 2, 0, 1, False, 0, -1.0),
                          ("a", 6, 1, 1, True, 0, 1e9), ("c", 2, 1, 1, False, 0, -1.0),
                          ("b", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]
    searches: list[Search] = [(4, 2, 0, "a", "unallocated", None, False)]
    s = _state(running, searches)
    pi = s.inputs(T0, USAGES[0])
    p = s.state.pending["p0"]
    v = s.starting.victim_view(pi)
    assert s.state.pool.soft_reaching(4) == 0 < p.n == 2
    with maps_read() as read:
        found = victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, only_unallocated=True)
    assert isinstance(found, NoVictims) and found.lasting and not read


def test_the_count_leaves_out_the_reserved_nodes_with_room_and_only_those() -> None:
    """Node 0, reserved, has 4 GPUs of unallocated work and node 1, 3 free GPUs (5 of protected
    allocated work); the rest are full of protected work: a one-node search for 4 GPUs of
    unallocated work, kept off node 0, fails lasting on the count (node 0 taken off it) without
    reading a map.  Reserve node 1 instead and node 0's unallocated job is the victim: node 1,
    short of 4, is not taken off the count."""
    running: list[Job] = [("a", 4, 0, 1, True, 0, 1e9), ("b", 4, 0, 1, False, 0, -1.0),
                          ("a", 5, 1, 1, True, 0, 1e9), ("b", 8, 2, 1, True, 0, 1e9), ("c", 8, 3, 1, True, 0, 1e9)]
    s = _state(running, [(4, 1, 0, "a", "unallocated", None, False)])
    pi = s.inputs(T0, USAGES[0])
    p = s.state.pending["p0"]
    v = s.starting.victim_view(pi)
    assert s.state.pool.soft_reaching(4) == 1 == p.n
    with maps_read() as read:
        off0 = victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, only_unallocated=True,
                                    allow=Hold("holder", frozenset({0}), T0 + 1e6, (0, -1, "x")).admit)
        assert isinstance(off0, NoVictims) and off0.lasting and not read
        off1 = victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, only_unallocated=True,
                                    allow=Hold("holder", frozenset({1}), T0 + 1e6, (0, -1, "x")).admit)
    assert [(x.job_id, x.rule) for x in off1] == [("r01", "unallocated")]  # type: ignore[union-attr]


def _with_yielding(running: Sequence[Job], searches: Sequence[Search], yields: Sequence[bool]) -> Scheduler:
    """``_state``'s scheduler with the allocated jobs ``yields`` marks (by place) restarted as jobs
    that yield to a reservation (``Run.yields``: what a search that may hold one may take too)."""
    s = _state(running, searches)
    for k, y in enumerate(yields):
        r = s.state.running.get(f"r{k:02d}")
        if y and r is not None and r.allocated:
            s.state.stop(r.jid)
            s.state.add_running(r.spec, r.start, tuple((s.state.pool.names[i], g) for i, g in r.placement),
                                allocated=True, protected_until=r.protected_until, yields=True)
    s.state.expire_protections(T0)
    return s


@settings(max_examples=300, deadline=None)
@given(st.lists(job, max_size=10), st.lists(search, min_size=1, max_size=4), st.sampled_from(range(len(USAGES))),
       st.lists(st.integers(0, len(NODES) - 1), max_size=2), st.lists(st.booleans(), max_size=10))
def test_find_victims_answers_as_it_would_without_the_count(running: Sequence[Job], searches: Sequence[Search],
                                                            usage: int, down: list[int], yields: list[bool]) -> None:
    """With the pool's count replaced by one no search is below (every node), ``find_victims``
    merges the maps and answers from the hosts; it must answer the same, on the fast walk's view
    (which leaves out own work no search may take) and on the reference's (which reads the
    count for one node only), and the two the same, with nodes down and jobs that yield to a
    reservation too."""
    s = _with_yielding(running, searches, yields)
    for i in down:
        s.state.set_health(s.state.pool.names[i], False, T0)
    pi = s.inputs(T0, USAGES[usage])
    fast = s.starting.victim_view(pi)
    ref = VictimView(fast.pool, fast.running, fast.acct, fast.keep_nonresumable, fast.hysteresis, fast.reclaims,
                     fast.t, None, fast.debug_threshold_s)
    for k, (_, _, _, _, kind, held, debug) in enumerate(searches):
        p = s.state.pending[f"p{k}"]
        allow = None if held is None else Hold("holder", held, T0 + 1e6, (0, -1, "x")).admit
        terms = {"allow": allow, "only_unallocated": kind == "unallocated", "reserve": kind == "reserve",
                 "debug_end": T0 + 900.0 if debug else None}
        got = [_answer(victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, **terms))  # type: ignore[arg-type]
               for v in (fast, ref)]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(NodePool, "soft_reaching", lambda self, per: len(self.names))
            want = [_answer(victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, **terms))  # type: ignore[arg-type]
                    for v in (fast, ref)]
        assert got == want and got[0] == got[1], (k, kind, held, got, want)
