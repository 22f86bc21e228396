"""Queue tiers for unallocated work, when a failed victim search is repeated, and which ends of
protection need a pass at once: on a Scheduler kept between passes, as the simulator keeps it."""

from __future__ import annotations

from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from tests.core.builders import make_config

NODES = (NodeState("n000", 8), NodeState("n001", 8))


def _sched(mode: str = "budgets") -> Scheduler:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2), "c1", mode=mode)
    return Scheduler(ctx, NODES)


def _job(i: str, account: str, gpus: int, *, mr: float = 600, prio: int = 0, submit: float = 0.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=36000, min_runtime=mr, priority=prio, user="u")


def test_unallocated_work_only_takes_what_allocated_work_leaves() -> None:
    s = _sched()
    # b's free work is older and its team is better ranked (no usage at all), yet a's allocated
    # job, submitted later, gets the GPUs first
    s.add_pending(_job("free", "b", 8, mr=0), 0.0, 0.0)
    s.add_pending(_job("alloc", "a", 16), 5.0, 5.0)
    d = s.run_pass(10.0, {"a": 100.0, "b": 0.0})
    assert [x.job_id for x in d.starts] == ["alloc"]
    assert s.queue_of(_job("free", "b", 8, mr=0)) != s.queue_of(_job("x", "b", 8))


def test_unallocated_job_at_the_head_does_not_stop_its_team_from_preempting() -> None:
    s = _sched()
    s.add_running(_job("ra", "a", 8), 0.0, (("n000", 8),), allocated=True, protected_until=600.0)
    s.add_running(_job("rb", "a", 8), 0.0, (("n001", 8),), allocated=True, protected_until=600.0)
    s.add_pending(_job("bfree", "b", 8, mr=0, prio=5), 0.0, 0.0)
    s.add_pending(_job("balloc", "b", 8), 1.0, 1.0)
    d = s.run_pass(700.0, {"a": 50.0, "b": 0.0})
    assert [p.rule for p in d.preemptions] == ["reclaim"]
    assert [x.job_id for x in d.starts] == ["balloc"]


def test_a_failed_search_is_repeated_on_the_grid_not_every_pass() -> None:
    s = _sched()
    s.add_running(_job("ra", "a", 8), 0.0, (("n000", 8),), allocated=True, protected_until=1000.0)
    s.add_running(_job("rb", "a", 8), 0.0, (("n001", 8),), allocated=True, protected_until=1e9)
    s.add_pending(_job("pb", "b", 8), 0.0, 0.0)
    usage = {"a": 50.0, "b": 0.0}
    d = s.run_pass(990.0, usage)  # everything is protected: the search fails
    assert d.starts == () and d.preemptions == ()
    retry = s.ctx.preempt_retry_s
    # ra's protection ends at 1000 s; a pass soon after does not search again yet ...
    d = s.run_pass(1000.0, usage)
    assert d.starts == ()
    assert d.retry_at is not None and 1000.0 < d.retry_at <= 990.0 + 2 * retry
    assert d.retry_at % retry == 0
    # ... the pass at the grid point does, and b reclaims
    d = s.run_pass(d.retry_at, usage)
    assert [p.rule for p in d.preemptions] == ["reclaim"] and [x.job_id for x in d.starts] == ["pb"]


def test_a_new_job_of_the_team_searches_at_once() -> None:
    s = _sched()
    s.add_running(_job("ra", "a", 8, prio=0), 0.0, (("n000", 8),), allocated=True, protected_until=100.0)
    s.add_running(_job("rb", "a", 8, prio=0), 0.0, (("n001", 8),), allocated=True, protected_until=100.0)
    assert s.run_pass(200.0, {}).starts == ()
    s.add_pending(_job("debug", "a", 2, prio=2), 205.0, 205.0)
    d = s.run_pass(210.0, {})
    assert [p.rule for p in d.preemptions] == ["within-team"] and [x.job_id for x in d.starts] == ["debug"]


def test_only_some_ends_of_protection_need_a_pass_at_once() -> None:
    s = _sched()
    s.add_running(_job("ra", "a", 8, prio=0), 0.0, (("n000", 8),), allocated=True, protected_until=100.0)
    s.add_running(_job("rb", "b", 8, prio=0), 0.0, (("n001", 8),), allocated=True, protected_until=100.0)
    assert not s.expiry_matters("ra", 50.0)  # still protected
    assert not s.expiry_matters("ra", 100.0)  # nothing of its own team waits
    s.add_pending(_job("pa", "a", 2, prio=1), 60.0, 60.0)
    assert s.expiry_matters("ra", 100.0)  # a higher-priority job of its own team waits
    assert not s.expiry_matters("rb", 100.0)
    s.set_health("n001", False, 90.0)
    assert s.expiry_matters("rb", 100.0)  # it sits on a node that drains


def test_old_priority_scheduler_never_preempts_for_work_beyond_the_limit() -> None:
    s = _sched("priority")
    s.add_running(_job("free", "a", 8, mr=0), 0.0, (("n000", 8),), allocated=False, protected_until=0.0)
    s.add_running(_job("mine", "b", 8), 0.0, (("n001", 8),), allocated=True, protected_until=float("inf"))
    s.add_pending(_job("more", "b", 8), 1.0, 1.0)  # b already runs its 8-GPU limit
    d = s.run_pass(10.0, {})
    assert d.preemptions == () and d.starts == ()
    s.add_pending(_job("within", "a", 8), 2.0, 2.0)  # a runs nothing charged: within its limit
    d = s.run_pass(20.0, {})
    assert [p.rule for p in d.preemptions] == ["unallocated"] and [x.job_id for x in d.starts] == ["within"]


def test_a_capped_team_slices_its_own_time_under_its_cap() -> None:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, max_gpus={"a": 8}), "c1")
    s = Scheduler(ctx, NODES)
    s.add_running(_job("batch", "a", 6, prio=0), 0.0, (("n000", 6),), allocated=True, protected_until=100.0)
    s.add_running(_job("inter", "a", 2, prio=1), 0.0, (("n000", 2),), allocated=True, protected_until=1e9)
    s.add_pending(_job("debug", "a", 2, prio=2), 150.0, 150.0)  # n001 is idle, but a is at its cap
    d = s.run_pass(160.0, {})
    assert [(p.job_id, p.rule) for p in d.preemptions] == [("batch", "within-team")]
    assert [x.job_id for x in d.starts] == ["debug"]
    assert s.tree_gpus["a"] <= 8
    # a job of the same priority never makes room this way (no cycles)
    s.add_pending(_job("debug2", "a", 8, prio=2), 170.0, 170.0)
    d = s.run_pass(180.0, {})
    assert d.preemptions == () and d.starts == ()
