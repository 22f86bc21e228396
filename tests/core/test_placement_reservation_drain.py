"""Placement, reservations with backfill, and draining with the human-drain threshold."""

from __future__ import annotations

import gc
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.reservation import Hold, Holds, NodeEnds, allow_for, plan_hold
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.core.state import Pend
from tests.core.builders import make_config

NODES = (NodeState("n000", 8), NodeState("n001", 8), NodeState("n002", 8))


def _ctx(**pol: object) -> object:
    return build_context(make_config({"a": 1, "b": 1}, nodes=3, policy=Policy(**pol)), "c1")  # type: ignore[arg-type]


def _job(i: str, gpus: int, *, work: float = 3600, mr: float = 600, ppn: int | None = None, account: str = "a",
         prio: int = 0) -> JobSpec:
    return JobSpec(id=i, submit=0.0, account=account, gpus=gpus, work=work, min_runtime=mr, gpus_per_node=ppn, user="u",
                   priority=prio)


def test_a_small_job_goes_to_the_fullest_node_that_fits() -> None:
    pool = NodePool(NODES)
    pool.allocate("x", ((0, 2),))
    pool.allocate("y", ((1, 6),))
    assert pool.find(_job("j", 2), 1, 2) == ((1, 2),)
    assert pool.find(_job("k", 4), 1, 4) == ((0, 4),)


def test_a_gang_takes_whole_nodes_all_or_nothing() -> None:
    pool = NodePool(NODES)
    pool.allocate("x", ((0, 1),))
    assert pool.shape(_job("g", 16, ppn=8)) == (2, 8)
    assert pool.find(_job("g", 16, ppn=8), 2, 8) == ((1, 8), (2, 8))
    pool.allocate("y", ((1, 1),))
    assert pool.find(_job("g", 16, ppn=8), 2, 8) is None


def test_an_unhealthy_node_takes_no_new_work() -> None:
    pool = NodePool(NODES)
    pool.set_health(0, False)
    pool.set_health(1, False)
    assert pool.find(_job("j", 8), 1, 8) == ((2, 8),)
    assert pool.free_gpus() == 8


def test_a_job_too_large_for_any_node_shape_never_fits() -> None:
    assert NodePool(NODES).shape(_job("huge", 32, ppn=8)) == (0, 0)


def test_a_blocked_gang_holds_the_nodes_that_free_up_first_and_only_short_jobs_backfill() -> None:
    running = (
        RunningJob(_job("soon", 8, work=1000), 0.0, (("n000", 8),), True, 600.0),
        RunningJob(_job("late", 8, work=90000), 0.0, (("n001", 8),), True, 600.0 + 1e6),
        RunningJob(_job("mid", 4, work=5000), 0.0, (("n002", 4),), True, 600.0 + 1e6),
    )
    pending = (
        PendingJob(_job("gang", 16, ppn=8, mr=7200, account="b", prio=1), 0.0, 0.0),
        PendingJob(_job("long", 4, work=20000, mr=20000, account="b"), 1.0, 1.0),  # protected past it
        PendingJob(_job("short", 4, work=500, account="b"), 2.0, 2.0),
    )
    d = decide(Snapshot(NODES, running, pending), _ctx(), 100.0)  # type: ignore[arg-type]
    assert [(r.job_id, r.nodes, r.at) for r in d.reservations] == [("gang", ("n000", "n002"), 5000.0)]
    assert {s.job_id for s in d.starts} == {"short"}


def test_a_drain_waits_for_protected_jobs_and_flags_those_past_the_human_threshold() -> None:
    nodes = (NodeState("n000", 8, healthy=False), NodeState("n001", 8), NodeState("n002", 8))
    running = (
        RunningJob(_job("done", 2, mr=600), 0.0, (("n000", 2),), True, 600.0),
        RunningJob(_job("short", 2, mr=600), 0.0, (("n000", 2),), True, 1200.0),
    )
    d = decide(Snapshot(nodes, running), _ctx(human_drain_threshold_s=3600), 700.0)  # type: ignore[arg-type]
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("done", "drain")]
    assert d.nodes[0].state == "draining" and d.nodes[0].waiting_on == ("short",) and not d.nodes[0].needs_human
    long = (*running[:1], RunningJob(_job("long", 2, mr=600), 0.0, (("n000", 2),), True, 700.0 + 7200))
    d = decide(Snapshot(nodes, long), _ctx(human_drain_threshold_s=3600), 700.0)  # type: ignore[arg-type]
    assert d.nodes[0].needs_human


def test_an_empty_unhealthy_node_is_ready_for_repair() -> None:
    nodes = (NodeState("n000", 8, healthy=False), NodeState("n001", 8), NodeState("n002", 8))
    d = decide(Snapshot(nodes), _ctx(), 10.0)  # type: ignore[arg-type]
    assert [(n.node, n.state) for n in d.nodes] == [("n000", "ready-for-repair")]


def test_the_reconciler_is_told_when_to_look_again() -> None:
    running = (RunningJob(_job("r", 8, mr=600), 0.0, (("n000", 8),), True, 600.0),)
    waiting = (PendingJob(_job("big", 32), 0.0, 0.0),)
    d = decide(Snapshot(NODES, running, waiting), _ctx(fairshare_period_s=0), 100.0)  # type: ignore[arg-type]
    assert d.wake_at == 600.0  # work waits: the end of a protection may let it preempt
    d = decide(Snapshot(NODES, running, waiting), _ctx(), 100.0)  # type: ignore[arg-type]
    assert d.wake_at == 300.0  # ... and before that, the next epoch boundary
    assert decide(Snapshot(NODES, running), _ctx(), 100.0).wake_at is None  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.sampled_from([-math.inf, 10.0, 20.0, 30.0])), min_size=1, max_size=12),
       st.integers(1, 5), st.integers(1, 8), st.sampled_from([-math.inf, 0.0, 15.0]),
       st.frozensets(st.integers(0, 11), max_size=6))
def test_a_reservation_takes_the_n_nodes_that_free_up_soonest_ties_by_node_order(
    nodes: list[tuple[int, float]], n: int, per: int, now: float, taken: frozenset[int]
) -> None:
    """... of the nodes better-ranked holds did not take (``taken``), read only where
    ``plan_hold`` looks at a node."""
    pool = NodePool(tuple(NodeState(f"n{i:02d}", 8) for i in range(len(nodes))))
    ends = NodeEnds(len(nodes))
    for i, (used, end) in enumerate(nodes):
        if used:
            pool.allocate(f"j{i}", ((i, used),))
        ends.set_end(i, end)
    for i, (_, end) in enumerate(nodes):  # and again: moving an end keeps the index right
        ends.set_end(i, 99.0)
        ends.set_end(i, end)
    # the definition: the n smallest (free at, node), a node with per free being free at -inf
    taken = frozenset(i for i in taken if i < len(nodes))  # node indices, as the holds' are
    left = [i for i in range(len(nodes)) if i not in taken]
    free_at = sorted((-math.inf if pool.free[i] >= per else ends.end[i], i) for i in left)[:n]
    got = plan_hold(pool, ends, "g", None, n, per, now, (0, 0, "q"), taken)
    if len(left) < n:
        assert got is None
    else:
        assert got is not None
        assert (got.nodes, got.at) == (frozenset(i for _, i in free_at), max(now, free_at[-1][0]))


def test_allow_for_returns_the_holds_one_filter_which_admits_exactly_the_unreserved_nodes() -> None:
    """``Hold.admit`` is made once per hold (not a new bound method per candidate): the filter
    every candidate gets is that one object, it admits the nodes the hold does not reserve, and
    it does not refer back to the hold (no reference cycle per hold for the cyclic GC)."""
    h = Hold("holder", frozenset({1, 3}), 500.0, (0, 0, "q"))
    p = Pend(JobSpec(id="p", submit=0.0, account="a", gpus=8, work=3600.0, min_runtime=600.0, user="u"),
             0.0, 0.0, 0.0, 0, None, "a")
    p.mr = 600.0  # filled in by the cluster when queued
    f = allow_for(Holds((h,)), p, 0.0, (0, 0, "q"))
    assert f is not None and f is allow_for(Holds((h,)), p, 0.0, (0, 0, "q"))
    assert [f(i) for i in range(5)] == [True, False, True, False, True]
    assert not any(r is h for r in gc.get_referents(f))
