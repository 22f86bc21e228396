"""Queue tiers for unallocated work, baselines, caps and fixpoints: on a Scheduler kept between
passes, as the simulator keeps it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.scheduler import Scheduler, _key_of
from allotment.core.snapshot import NodeState
from allotment.core.walk import REFERENCE
from tests.core.builders import make_config

NODES = (NodeState("n000", 8), NodeState("n001", 8))


def _sched(mode: str = "budgets", **kw: object) -> Scheduler:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, **kw), "c1", mode=mode)  # type: ignore[arg-type]
    return Scheduler(ctx, NODES)


def _job(i: str, account: str, gpus: int, *, mr: float = 600, prio: int = 0, submit: float = 0.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=36000, min_runtime=mr, priority=prio, user="u")


def test_unallocated_work_only_takes_what_allocated_work_leaves() -> None:
    s = _sched()
    s.state.add_pending(_job("free", "b", 8, mr=0), 0.0, 0.0)
    s.state.add_pending(_job("alloc", "a", 16), 5.0, 5.0)
    d = s.run_pass(10.0, {"a": 100.0, "b": 0.0})
    assert [x.job_id for x in d.starts] == ["alloc"]
    assert s.state.queue_of(_job("free", "b", 8, mr=0)) != s.state.queue_of(_job("x", "b", 8))


def test_unallocated_job_at_the_head_does_not_stop_its_team_from_preempting() -> None:
    s = _sched()
    s.state.add_running(_job("ra", "a", 8), 0.0, (("n000", 8),), allocated=True, protected_until=600.0)
    s.state.add_running(_job("rb", "a", 8), 0.0, (("n001", 8),), allocated=True, protected_until=600.0)
    s.state.add_pending(_job("bfree", "b", 8, mr=0, prio=5), 0.0, 0.0)
    s.state.add_pending(_job("balloc", "b", 8), 1.0, 1.0)
    d = s.run_pass(700.0, {"a": 50.0, "b": 0.0})
    assert [p.rule for p in d.preemptions] == ["reclaim"]
    assert [x.job_id for x in d.starts] == ["balloc"]


def test_a_reclaim_happens_at_the_first_pass_after_protection_ends_whatever_came_before() -> None:
    """No retry grid: the pass right at the end of the protection reclaims, and the core names
    that instant as the next wake-up."""
    s = _sched()
    s.state.add_running(_job("ra", "a", 8), 0.0, (("n000", 8),), allocated=True, protected_until=1000.0)
    s.state.add_running(_job("rb", "a", 8), 0.0, (("n001", 8),), allocated=True, protected_until=1e9)
    s.state.add_pending(_job("pb", "b", 8), 0.0, 0.0)
    usage = {"a": 50.0, "b": 0.0}
    d = s.run_pass(990.0, usage)
    assert d.starts == () and d.preemptions == ()
    assert s.wake_at(990.0) == 1000.0
    d = s.run_pass(1000.0, usage)
    assert [p.rule for p in d.preemptions] == ["reclaim"] and [x.job_id for x in d.starts] == ["pb"]


def test_a_second_pass_at_the_same_time_decides_nothing() -> None:
    s = _sched()
    s.state.add_running(_job("free", "a", 8, mr=0), 0.0, (("n000", 8),), allocated=False, protected_until=0.0)
    for i in range(4):
        s.state.add_pending(_job(f"p{i}", "b" if i % 2 else "a", 4, mr=0 if i == 3 else 600), 1.0, 1.0)
    first = s.run_pass(10.0, {"a": 1.0})
    assert first.starts
    again = s.run_pass(10.0, {"a": 1.0})
    assert again.starts == () and again.preemptions == ()


def test_reference_and_fast_walks_take_the_same_decisions() -> None:
    def run(walk: object) -> tuple[object, ...]:
        ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2), "c1")
        s = Scheduler(ctx, NODES, walk=walk) if walk is not None else Scheduler(ctx, NODES)  # type: ignore[arg-type]
        s.state.add_running(_job("ra", "a", 8), 0.0, (("n000", 8),), allocated=True, protected_until=100.0)
        s.state.add_pending(_job("pa", "a", 16), 1.0, 1.0)
        s.state.add_pending(_job("pb", "b", 4), 2.0, 2.0)
        s.state.add_pending(_job("pf", "b", 2, mr=0), 3.0, 3.0)
        d = s.run_pass(200.0, {"a": 10.0})
        return (d.starts, d.preemptions, d.reservations)

    assert run(REFERENCE) == run(None)


def test_old_priority_scheduler_never_preempts_for_work_beyond_the_limit() -> None:
    s = _sched("priority")
    s.state.add_running(_job("free", "a", 8, mr=0), 0.0, (("n000", 8),), allocated=False, protected_until=0.0)
    s.state.add_running(_job("mine", "b", 8), 0.0, (("n001", 8),), allocated=True, protected_until=float("inf"))
    s.state.add_pending(_job("more", "b", 8), 1.0, 1.0)  # b already runs its 8-GPU limit
    d = s.run_pass(10.0, {})
    assert d.preemptions == () and d.starts == ()
    s.state.add_pending(_job("within", "a", 8), 2.0, 2.0)  # a runs nothing charged: within its limit
    d = s.run_pass(20.0, {})
    assert [p.rule for p in d.preemptions] == ["unallocated"] and [x.job_id for x in d.starts] == ["within"]


def test_fifo_never_preempts() -> None:
    s = _sched("fifo")
    s.state.add_running(_job("free", "a", 8, mr=0), 0.0, (("n000", 8),), allocated=False, protected_until=0.0)
    s.state.add_running(_job("other", "a", 8, mr=0), 0.0, (("n001", 8),), allocated=False, protected_until=0.0)
    s.state.add_pending(_job("p", "b", 8), 1.0, 1.0)
    assert s.run_pass(10.0, {}).preemptions == ()


def test_a_capped_team_slices_its_own_time_under_its_cap() -> None:
    s = _sched(max_gpus={"a": 8})
    s.state.add_running(_job("batch", "a", 6, prio=0), 0.0, (("n000", 6),), allocated=True, protected_until=100.0)
    s.state.add_running(_job("inter", "a", 2, prio=1), 0.0, (("n000", 2),), allocated=True, protected_until=1e9)
    s.state.add_pending(_job("debug", "a", 2, prio=2), 150.0, 150.0)  # n001 is idle, but a is at its cap
    d = s.run_pass(160.0, {})
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("batch", "within-team")]
    assert [x.job_id for x in d.starts] == ["debug"]
    assert s.state.acct.tree_gpus("a") <= 8
    # a job of the same priority never makes room this way (no cycles), unless it is a debug job
    # that would end first (core.preemption.debug_slice): debug2 ends after debug
    s.state.add_pending(_job("debug2", "a", 8, prio=2), 170.0, 170.0)
    d = s.run_pass(180.0, {})
    assert d.preemptions == () and d.starts == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.sampled_from([1, 2, 4, 8, 16]),
                          st.sampled_from([0.0, 600.0])), min_size=1, max_size=30))
def test_a_queues_kept_shape_extremes_follow_its_jobs(ops: list[tuple[bool, int, int, float]]) -> None:
    """``Shapes`` keeps the fewest GPUs per node, the fewest allocated GPUs and the most allocated
    GPUs per node between changes (the fast walk reads them every round): after any sequence of
    arrivals and removals they are those of the jobs in the queue."""
    s = _sched()
    here: dict[str, JobSpec] = {}
    for k, (add, slot, gpus, mr) in enumerate(ops):
        jid = f"j{slot}"
        if add and jid not in here:
            here[jid] = _job(jid, "a", gpus, mr=mr, submit=float(k))
            s.state.add_pending(here[jid], float(k), float(k))
        elif not add and jid in here:
            del here[jid]
            s.state.take_pending(jid)
        for q in s.state.queues.queues:  # each queue's jobs (unallocated work waits in its own)
            placeable = [p for p in q.jobs if p.n > 0]
            alloc = [p for p in placeable if p.mr > 0]
            assert q.shapes.least_per() == min((p.per for p in placeable), default=0)
            assert q.shapes.least_alloc_gpus() == min((p.gpus for p in alloc), default=0)
            assert q.shapes.most_alloc_per() == max((p.per for p in alloc), default=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "x", "ab", "b0"]), st.sampled_from([0.0, 600.0]),
                          st.sampled_from([1, 8, 16])), min_size=1, max_size=12),
       st.floats(0, 500), st.floats(0, 500))
def test_a_rounds_integer_queue_order_is_the_order_of_its_keys(
    jobs: list[tuple[str, float, int]], used_a: float, used_b: float
) -> None:
    """A round sorts its queues by one integer per queue (``Scheduler._order``): it must order
    them as their (tier, Fair Tree rank, name) keys do, ties of tier and rank included
    (accounts the tree does not rank, unallocated queues), and decode back to the key."""
    s = _sched()
    for k, (account, mr, gpus) in enumerate(jobs):
        s.state.add_pending(_job(f"j{k}", account, gpus, mr=mr, submit=float(k)), float(k), float(k))
    s.run_pass(10.0, {"a": used_a, "b": used_b})  # something runs: the tiers differ
    pi = s.inputs(20.0, {"a": used_a, "b": used_b})
    qs = s.state.queues.nonempty_queues()
    kept = {q.name: s._round_key(q, pi) for q in qs}
    assert sorted(qs, key=lambda q: kept[q.name].order) == sorted(qs, key=lambda q: kept[q.name].key)
    for q in qs:
        assert kept[q.name].key == s.starting.queue_key(q.name, pi)
        assert _key_of(kept[q.name].order, len(s.state.queues.queues), len(pi.rank_index) + 1, s.state.queues.by_rank) == kept[q.name].key
