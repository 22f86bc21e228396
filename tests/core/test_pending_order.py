"""The pending order ``decide()`` reports every tick (issue 28, item 5): ``core.order.pending_order``
ranks each queue over arrays and merges the queues, and gives exactly the rows of the plain
reference, ``pending_order_by_key`` (one ``Scorer.total`` per job, one sort of every key)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy, PriorityWeights
from allotment.core.context import build_context
from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.order import pending_order, pending_order_by_key
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.core.within_team_arrays import ARRAYS_FROM
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NODES = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))
# "x" and "y" are in no budget: neither has a Fair Tree rank, so their queues share a place
ACCOUNTS = ("a", "a", "b", "c", "x", "y")


@st.composite
def _pending(draw: st.DrawFn) -> list[JobSpec]:
    """Pending jobs of several teams, allocated and not (two queues a team), with dependencies
    (mostly on earlier jobs, some on any), deadlines, equal eligibility times; sometimes one
    team's queue long enough to be scored over arrays."""
    n = draw(st.integers(1, 40)) if draw(st.booleans()) else draw(st.integers(ARRAYS_FROM, ARRAYS_FROM + 40))
    long_team = draw(st.sampled_from(ACCOUNTS))
    specs = []
    for i in range(n):
        deps = draw(st.lists(st.sampled_from([f"j{k}" for k in range(n)]), max_size=2, unique=True))
        specs.append(JobSpec(
            id=f"j{i}", submit=draw(st.sampled_from([0.0, 0.0, 50.3, 3000.7])),
            account=long_team if draw(st.booleans()) else draw(st.sampled_from(ACCOUNTS)),
            gpus=draw(st.sampled_from([1, 2, 8, 16])), work=draw(st.sampled_from([100.3, 600.0, 3600.9, 20_000.1])),
            user=draw(st.sampled_from(["u0", "u1", "u2"])), min_runtime=draw(st.sampled_from([0.0, 600.0, 600.0])),
            priority=draw(st.sampled_from([-2, 0, 0, 1, 3])),
            deadline=draw(st.one_of(st.none(), st.none(), st.sampled_from([100.0, 2000.3, 9000.7]))),
            depends_on=tuple(deps),
        ))
    return specs


@settings(max_examples=150, deadline=None)
@given(_pending(), st.sampled_from(["fixed", "adaptive", "fifo"]), st.booleans(), st.booleans(),
       st.sampled_from([0.0, 500.0, 7200.0]))
def test_the_pending_order_is_the_references_row_for_row(
    specs: list[JobSpec], mode: str, deps_on: bool, boosted: bool, now: float
) -> None:
    boosts = (Boost("account:b", 0.5, T0 + dt.timedelta(days=1), "t", "lead"),
              Boost("job:j3", 0.25, T0 + dt.timedelta(days=1), "t", "lead")) if boosted else ()
    pw = PriorityWeights(mode=mode, dependencies=deps_on)  # type: ignore[arg-type]
    ctx = build_context(make_config({"a": 2, "b": 1, "c": 1}, nodes=len(NODES),
                                    policy=Policy(priority_weights=pw, boosts=boosts)), "c1")
    running = (RunningJob(JobSpec("r0", 0.0, "a", 4, 7200.0, user="u1", min_runtime=600.0), 0.0, (("n000", 4),),
                          True, 600.0),)
    snap = Snapshot(NODES, running, tuple(PendingJob(s, s.submit, s.submit) for s in specs), {"a": 3.0, "b": 1.0})
    sched = build_scheduler(snap, ctx, now, frozenset())
    pi = sched.inputs(now, snap.usage)
    assert pending_order(sched, pi) == pending_order_by_key(sched, pi)


def test_queues_without_a_rank_are_merged_by_score() -> None:
    """Two teams in no budget share a (tier, rank): their jobs interleave by score, as one sort
    of every key puts them, not queue after queue."""
    specs = [JobSpec(f"j{i}", 0.0, acct, 1, 600.0, user="u0", priority=prio, min_runtime=600.0)
             for i, (acct, prio) in enumerate([("x", 1), ("x", 0), ("y", 3), ("y", -1)])]
    ctx = build_context(make_config({"a": 1}, nodes=len(NODES)), "c1")
    snap = Snapshot(NODES, (), tuple(PendingJob(s, 0.0, 0.0) for s in specs))
    sched = build_scheduler(snap, ctx, 0.0, frozenset())
    pi = sched.inputs(0.0, {})
    got = [r.job_id for r in pending_order(sched, pi)]
    assert got == [r.job_id for r in pending_order_by_key(sched, pi)]
    assert got == ["j2", "j0", "j1", "j3"]
