"""``core.session_grace``: a session the core must stop to make room is told first and stopped
only by a pass after its grace, with its neighbours kept running meanwhile; a session whose class
names a restore hook keeps its work; the simulator and the reconciler's ``decide()`` read the
same rule (issue 29)."""

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
GRACE = 600
T = 4000.0  # the gang's submission, after b's protections (1 h) ended


def _jobs() -> list[JobSpec]:
    # three 8-GPU nodes; a is owed 16 GPUs, b 8.  b fills the cluster at t=0: a session s and a
    # batch job k, both protected an hour, and j, protected 8 hours.  At 4,000 s a submits a
    # two-node gang g: b's s and k are the only victims it can take.
    day = 24 * HOUR
    return [
        JobSpec(id="j", submit=0.0, account="b", gpus=8, work=day, min_runtime=8 * HOUR, user="u", resumable=False),
        JobSpec(id="k", submit=0.0, account="b", gpus=8, work=day, min_runtime=HOUR, user="u", resumable=False),
        JobSpec(id="s", submit=0.0, account="b", gpus=8, work=day, min_runtime=HOUR, user="u", resumable=False,
                kind="interactive"),
        JobSpec(id="g", submit=T, account="a", gpus=16, work=2 * HOUR, min_runtime=600.0, user="v",
                gpus_per_node=8),
    ]


def _run(cls: InteractiveClass) -> SimResult:
    config = make_config({"a": 2, "b": 1}, nodes=3, policy=Policy(interactive=cls))
    return simulate(config, Workload.of(_jobs(), ()), keep_events=True, days=2.0)


def _events(res: SimResult, kind: str) -> list[tuple[float, str]]:
    return [(e.t, e.job or "") for e in res.events if e.event == kind]


def test_without_grace_a_session_is_stopped_at_once() -> None:
    res = _run(InteractiveClass())
    assert sorted(_events(res, "preempt")) == [(T, "k"), (T, "s")]
    assert (T, "g") in _events(res, "start")
    assert not _events(res, "notice")
    assert res.metrics["sessions"] == {"noticed": 0, "stopped": 1, "stopped_without_notice": 1}


def test_a_session_is_told_and_stopped_after_its_grace_with_its_neighbour_kept_running_meanwhile() -> None:
    res = _run(InteractiveClass(grace_s=GRACE))
    assert _events(res, "notice") == [(T, "s")]
    notice = next(e for e in res.events if e.event == "notice")
    assert (notice.by, notice.rule, notice.at) == ("g", "reclaim", T + GRACE)
    # k was not stopped at 4,000 s to sit idle through the grace: both go when it ends
    assert sorted(_events(res, "preempt")) == [(T + GRACE, "k"), (T + GRACE, "s")]
    assert (T + GRACE, "g") in _events(res, "start")
    assert res.metrics["sessions"] == {"noticed": 1, "stopped": 1, "stopped_without_notice": 0}


def test_a_session_with_a_restore_hook_keeps_its_work_and_one_without_loses_it() -> None:
    lost = {}
    for hook in (None, "allot-restore"):
        res = _run(InteractiveClass(grace_s=GRACE, restore_hook=hook))
        lost[hook] = next(e.lost_gpu_hours for e in res.events if e.event == "preempt" and e.job == "s")
        ends = {j: t for t, j in _events(res, "end")}
        restart = max(t for t, j in _events(res, "start") if j == "s")
        assert ends["s"] == restart + 24 * HOUR - (T + GRACE if hook else 0.0)
    assert lost[None] == 8 * (T + GRACE) / HOUR and lost["allot-restore"] == 0.0


def test_decide_reads_the_notice_from_the_snapshot_as_the_simulator_keeps_it() -> None:
    """The reconciler's path: a pass with no notice tells; one inside the grace does nothing; one
    after it stops the session and its neighbour and starts the gang."""
    config = make_config({"a": 2, "b": 1}, nodes=3, policy=Policy(interactive=InteractiveClass(grace_s=GRACE)))
    ctx = build_context(config, "c1", epoch=0.0)
    jobs = {j.id: j for j in _jobs()}
    nodes = tuple(NodeState(f"n{i}", 8, True) for i in range(3))
    names = [n.name for n in nodes]

    def snap(noticed_at: float | None) -> Snapshot:
        running = tuple(
            RunningJob(jobs[jid], 0.0, ((names[i], 8),), True, jobs[jid].min_runtime or 0.0,
                       noticed_at=noticed_at if jid == "s" else None)
            for i, jid in enumerate(("j", "k", "s"))
        )
        return Snapshot(nodes, running, (PendingJob(jobs["g"], T, T),), {"a": 0.0, "b": 100.0})

    now = 5000.0
    first = decide(snap(None), ctx, now)
    assert [n.job_id for n in first.notices] == ["s"] and not first.preemptions and not first.starts
    mid = decide(snap(now - 10), ctx, now)
    assert not mid.notices and not mid.preemptions and not mid.starts
    assert mid.wake_at is not None and mid.wake_at <= now - 10 + GRACE
    after = decide(snap(now - GRACE), ctx, now)
    assert sorted(p.job_id for p in after.preemptions) == ["k", "s"] and [s.job_id for s in after.starts] == ["g"]


def test_a_drain_tells_a_session_too_and_stops_it_after_its_grace() -> None:
    from allotment.core.jobs import NodeEvent

    jobs = [JobSpec(id="s", submit=0.0, account="b", gpus=8, work=24 * HOUR, min_runtime=HOUR, user="u",
                    resumable=False, kind="interactive")]
    config = make_config({"a": 2, "b": 1}, nodes=3, policy=Policy(interactive=InteractiveClass(grace_s=GRACE)))
    res = simulate(config, Workload.of(jobs, (NodeEvent(T, "n000", "unhealthy"),)), keep_events=True, days=1.0)
    assert [(e.t, e.job, e.rule, e.by) for e in res.events if e.event == "notice"] == [(T, "s", "drain", None)]
    assert [(e.t, e.rule) for e in res.events if e.event == "preempt"] == [(T + GRACE, "drain")]
    assert res.metrics["sessions"]["stopped_without_notice"] == 0
