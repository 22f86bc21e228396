"""decide(): the pure entry point a reconciler calls, on hand-built snapshots."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from tests.core.builders import make_config

NODES = (NodeState("n000", 8), NodeState("n001", 8))


def _ctx(policy: Policy | None = None, **kw: object) -> object:
    return build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=policy), "c1", **kw)  # type: ignore[arg-type]


def _job(i: str, account: str, gpus: int, *, mr: float = 600, work: float = 3600, prio: int = 0, ppn: int | None = None) -> JobSpec:
    return JobSpec(id=i, submit=0.0, account=account, gpus=gpus, work=work, min_runtime=mr, priority=prio, gpus_per_node=ppn, user="u")


def test_small_jobs_go_best_fit_on_one_node() -> None:
    running = (RunningJob(_job("r1", "a", 6), 0.0, (("n001", 6),), True, 600.0),)
    snap = Snapshot(NODES, running, (PendingJob(_job("p1", "b", 2), 0.0, 0.0),))
    d = decide(snap, _ctx(), 100.0)  # type: ignore[arg-type]
    assert [(s.job_id, s.placement) for s in d.starts] == [("p1", (("n001", 2),))]
    assert d.starts[0].allocated and d.starts[0].reason


def test_unallocated_work_yields_at_once_to_allocated_work() -> None:
    running = tuple(
        RunningJob(_job(f"free{i}", "a", 8, mr=0), 0.0, ((n, 8),), False, 0.0) for i, n in enumerate(("n000", "n001"))
    )
    snap = Snapshot(NODES, running, (PendingJob(_job("p1", "b", 4), 5.0, 5.0),))
    d = decide(snap, _ctx(), 10.0)  # type: ignore[arg-type]
    assert [p.rule for p in d.preemptions] == ["unallocated"]
    assert [s.job_id for s in d.starts] == ["p1"]


def test_a_protected_job_is_never_preempted() -> None:
    running = (
        RunningJob(_job("r1", "a", 8, mr=7200), 0.0, (("n000", 8),), True, 7200.0),
        RunningJob(_job("r2", "a", 8, mr=7200), 0.0, (("n001", 8),), True, 7200.0),
    )
    snap = Snapshot(NODES, running, (PendingJob(_job("p1", "b", 8), 0.0, 0.0),), usage={"a": 16.0})
    d = decide(snap, _ctx(), 3600.0)  # type: ignore[arg-type]
    assert d.preemptions == () and d.starts == ()
    # once the minimum runtime is over, b (below its entitlement) reclaims from a (above it)
    d = decide(snap, _ctx(), 7300.0)  # type: ignore[arg-type]
    assert [p.rule for p in d.preemptions] == ["reclaim"]
    assert [s.job_id for s in d.starts] == ["p1"]


def test_within_team_slicing_needs_strictly_higher_priority() -> None:
    running = (
        RunningJob(_job("r1", "a", 8, mr=60), 0.0, (("n000", 8),), True, 60.0),
        RunningJob(_job("r2", "a", 8, mr=60), 0.0, (("n001", 8),), True, 60.0),
    )
    same = Snapshot(NODES, running, (PendingJob(_job("p0", "a", 2, prio=0), 0.0, 0.0),))
    assert decide(same, _ctx(), 100.0).preemptions == ()  # type: ignore[arg-type]
    higher = Snapshot(NODES, running, (PendingJob(_job("p2", "a", 2, prio=2), 0.0, 0.0),))
    d = decide(higher, _ctx(), 100.0)  # type: ignore[arg-type]
    assert [p.rule for p in d.preemptions] == ["within-team"]


def test_a_blocked_gang_gets_a_reservation_and_short_jobs_backfill() -> None:
    # "long" is protected past the reservation's start (not a debug job that could yield)
    running = (RunningJob(_job("r1", "a", 4, mr=7200, work=7200), 0.0, (("n000", 4),), True, 7200.0),)
    pending = (
        PendingJob(_job("gang", "b", 16, ppn=8, mr=7200, prio=1), 0.0, 0.0),
        PendingJob(_job("long", "b", 4, work=20000, mr=20000), 1.0, 1.0),
        PendingJob(_job("short", "b", 4, work=600), 2.0, 2.0),
    )
    d = decide(Snapshot(NODES, running, pending), _ctx(), 10.0)  # type: ignore[arg-type]
    assert d.reservations and d.reservations[0].job_id == "gang"
    assert set(d.reservations[0].nodes) == {"n000", "n001"}
    started = {s.job_id for s in d.starts}
    assert "short" in started and "long" not in started


def test_an_unhealthy_node_drains_and_is_reported_ready_for_repair() -> None:
    nodes = (NodeState("n000", 8, healthy=False), NodeState("n001", 8))
    running = (RunningJob(_job("r1", "a", 4, mr=600), 0.0, (("n000", 4),), True, 600.0),)
    d = decide(Snapshot(nodes, running), _ctx(), 100.0)  # type: ignore[arg-type]
    assert d.preemptions == () and d.nodes[0].state == "draining" and d.nodes[0].waiting_on == ("r1",)
    d = decide(Snapshot(nodes, running), _ctx(), 700.0)  # type: ignore[arg-type]
    assert [p.rule for p in d.preemptions] == ["drain"]
    assert d.nodes[0].state == "ready-for-repair"
    assert all(n != "n000" for s in d.starts for n, _ in s.placement)


def test_order_exposes_the_fair_share_behind_it() -> None:
    pending = (PendingJob(_job("pa", "a", 16, ppn=8), 0.0, 0.0), PendingJob(_job("pb", "b", 16, ppn=8), 0.0, 0.0))
    busy = (RunningJob(_job("r", "a", 8, mr=9999), 0.0, (("n000", 8),), True, 9999.0),)
    d = decide(Snapshot(NODES, busy, pending, usage={"a": 30.0, "b": 10.0}), _ctx(), 10.0)  # type: ignore[arg-type]
    assert [r.job_id for r in d.order] == ["pb", "pa"]
    assert d.order[0].fair_share == (0.5,) and d.order[1].fair_share == (1.5,)
    assert "fair-share rank 1;" in d.order[0].reason  # counted from 1, as explain counts (issue 31)


def test_decide_is_pure_and_repeatable() -> None:
    snap = Snapshot(NODES, (), (PendingJob(_job("p", "a", 4), 0.0, 0.0),))
    ctx = _ctx()
    first = decide(snap, ctx, 1.0)  # type: ignore[arg-type]
    assert first.starts and first == decide(snap, ctx, 1.0)  # type: ignore[arg-type]
    # the snapshot still says the job is pending: decide() works on its own copy of the state
    assert [p.spec.id for p in snap.pending] == ["p"] and snap.running == ()
    assert decide(snap, ctx, 1.0).starts == first.starts  # type: ignore[arg-type]


def test_entitlements_come_from_the_compiler() -> None:
    config = make_config({"a": 3, "g": {"b": 1, "c": 1}}, nodes=2)
    ctx = build_context(config, "c1")
    for leaf in ("a", "b", "c"):
        assert ctx.entitlement_gpus[leaf] == config.node(leaf).entitlement_gpus["c1"]


def test_a_capped_account_is_owed_at_most_its_cap() -> None:
    ctx = build_context(make_config({"a": 3, "b": 1}, nodes=2, max_gpus={"a": 4}), "c1")
    assert ctx.entitlement_gpus["a"] == 4.0 and ctx.entitlement_gpus["b"] == 4.0


def test_a_starts_reason_counts_fair_share_ranks_from_one_as_explain_does() -> None:
    # issue 31: the event log said "fair-share rank 0" where explain says "1st"
    pending = (PendingJob(_job("pb", "b", 8, ppn=8), 0.0, 0.0),)
    d = decide(Snapshot(NODES, (), pending, usage={"a": 30.0, "b": 10.0}), _ctx(), 10.0)  # type: ignore[arg-type]
    assert [s.job_id for s in d.starts] == ["pb"]
    assert d.starts[0].reason.endswith("fair-share rank 1")
