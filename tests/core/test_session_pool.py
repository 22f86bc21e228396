"""``core.session_pool``: the last nodes of a cluster reserved for sessions.  A session starts
there first; other work keeps off them while another node fits, borrows idle pool GPUs without
protection, and gives them back the moment a session waits (rule ``session-pool``); no search,
reservation or move of other work reaches the pool; the simulator and the reconciler's
``decide()`` read the same rule (issue 29, the pool mode)."""

from __future__ import annotations

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0
DAY = 24 * HOUR
POOL = "n002"  # the last of three nodes


def _job(jid: str, account: str, gpus: int, submit: float = 0.0, *, kind: str = "batch", mr: float = HOUR,
         resumable: bool = True, work: float = DAY) -> JobSpec:
    return JobSpec(id=jid, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u",
                   resumable=resumable, kind=kind, checkpoint_interval=600.0 if resumable else None)


def _run(jobs: list[JobSpec], pool: int, **policy: object) -> SimResult:
    config = make_config({"a": 2, "b": 1}, nodes=3,
                         policy=Policy(interactive=InteractiveClass(pool_nodes=pool), **policy))  # type: ignore[arg-type]
    return simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0)


def _starts(res: SimResult) -> dict[str, list[tuple[float, tuple[str, ...]]]]:
    out: dict[str, list[tuple[float, tuple[str, ...]]]] = {}
    for e in res.events:
        if e.event == "start" and e.job is not None:
            out.setdefault(e.job, []).append((e.t, tuple(e.nodes or ())))
    return out


def test_a_session_starts_on_the_pool_and_other_work_keeps_off_it_while_another_node_fits() -> None:
    jobs = [_job("s", "a", 2, kind="interactive"), _job("w", "a", 2, 10.0)]
    without = _starts(_run(jobs, 0))
    assert without["s"] == [(0.0, ("n000",))]  # best fit: the first node
    got = _starts(_run(jobs, 1))
    assert got["s"] == [(0.0, (POOL,))]
    assert got["w"] == [(10.0, ("n000",))]


def test_lent_work_carries_no_protection_and_a_waiting_session_takes_it_back_at_once() -> None:
    # the cluster is full of a's resumable work, one job on the pool node; a session of b arrives
    # while every one of them is inside its hour of protection
    jobs = [_job(f"w{i}", "a", 8) for i in range(3)] + [_job("s", "b", 2, 600.0, kind="interactive")]
    without = _run(jobs, 0)
    assert min(e.t for e in without.events if e.event == "preempt") >= HOUR
    assert _starts(without)["s"][0][0] >= HOUR  # it waits for a protection to end
    res = _run(jobs, 1)
    lent = next(j for j, s in _starts(res).items() if s[0][1] == (POOL,))
    preempts = [(e.t, e.job, e.rule, e.by) for e in res.events if e.event == "preempt"]
    assert preempts == [(600.0, lent, "session-pool", "s")]
    assert _starts(res)["s"] == [(600.0, (POOL,))]
    why = next(e.reason for e in res.events if e.event == "start" and e.job == lent)
    assert "lent session-pool GPUs" in (why or "")


def test_work_the_policy_may_not_stop_never_borrows_the_pool() -> None:
    # non-resumable work kept to completion: lent work must be stoppable, so it waits instead
    jobs = [_job(f"w{i}", "a", 8, resumable=False) for i in range(3)]
    res = _run(jobs, 1, non_resumable="run_to_completion")
    starts = _starts(res)
    assert all(POOL not in nodes for s in starts.values() for _, nodes in s)
    assert starts["w2"][0][0] >= DAY  # after w0 or w1 ends
    lendable = _starts(_run(jobs, 1, non_resumable="requeue"))
    assert lendable["w2"] == [(0.0, (POOL,))]


def test_other_work_never_stops_a_session_on_the_pool() -> None:
    # b runs j (protected 8 h) and a session s (protected 1 h, on the pool); at T a, owed twice
    # b's share and running one node, submits y: the only victim its reclaim could take is s
    T = 2 * HOUR
    jobs = [_job("j", "b", 8, mr=8 * HOUR, resumable=False), _job("s", "b", 8, kind="interactive", resumable=False),
            _job("x", "a", 8, 1.0), _job("y", "a", 8, T)]
    without = _run(jobs, 0)
    assert [(e.t, e.job) for e in without.events if e.event == "preempt"] == [(T, "s")]
    res = _run(jobs, 1)
    assert _starts(res)["s"] == [(0.0, (POOL,))]
    assert [(e.t, e.job) for e in res.events if e.event == "preempt"] == [(8 * HOUR, "j")]  # j, not s
    assert _starts(res)["y"] == [(8 * HOUR, ("n000",))]


def test_decide_takes_lent_gpus_back_as_the_simulator_does() -> None:
    """The reconciler's path: a running job on a pool node, reported protected by the contract,
    holds lent GPUs all the same; a pending session takes them at once."""
    config = make_config({"a": 2, "b": 1}, nodes=3, policy=Policy(interactive=InteractiveClass(pool_nodes=1)))
    ctx = build_context(config, "c1", epoch=0.0)
    nodes = tuple(NodeState(f"n{i:03d}", 8, True) for i in range(3))
    running = tuple(RunningJob(_job(f"w{i}", "a", 8), 0.0, ((f"n{i:03d}", 8),), True, HOUR) for i in range(3))
    s = _job("s", "b", 2, 600.0, kind="interactive")
    got = decide(Snapshot(nodes, running, (PendingJob(s, 600.0, 600.0),), {"a": 0.0, "b": 0.0}), ctx, 600.0)
    assert [(p.job_id, p.rule, p.for_job) for p in got.preemptions] == [("w2", "session-pool", "s")]
    assert [(x.job_id, x.placement) for x in got.starts] == [("s", ((POOL, 2),))]


def test_a_pool_given_by_node_names_reserves_those_nodes() -> None:
    """``interactive.pool: [n000]``: the pool is the node named, not the last by name."""
    jobs = [_job("s", "a", 2, kind="interactive"), _job("w", "a", 2, 10.0)]
    config = make_config({"a": 2, "b": 1}, nodes=3,
                         policy=Policy(interactive=InteractiveClass(pool_names=("n000",))))
    got = _starts(simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0))
    assert got["s"] == [(0.0, ("n000",))]
    assert got["w"] == [(10.0, ("n001",))]  # best fit would take n000: it keeps off the pool
