"""``Policy.debug_reclaim`` (``core.preemption.terms.may_reclaim``): a debug job may reclaim
another team's allocated work past its protection whatever its own team runs now, still only
from a team served more over the window and running over what it is owed, and only where the
summed distance from what each is owed falls."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _run(debug_reclaim: bool) -> SimResult:
    # three 8-GPU nodes, four teams owed 6 GPUs each.  a runs two whole-node jobs and b one, all
    # protected 10 minutes and running for a day, so a and b both run above what they are owed
    # (tier 1), and a has been served twice b's share over the window.  At 1,000 s b submits a
    # 1-GPU debug job (protected 5 minutes) below its running job's declared priority, so its
    # own team's work is no victim (debug-slice takes only same-priority work).
    jobs = [
        JobSpec(id="a1", submit=0.0, account="a", gpus=8, work=24 * HOUR, min_runtime=600.0, user="u"),
        JobSpec(id="a2", submit=0.0, account="a", gpus=8, work=24 * HOUR, min_runtime=600.0, user="u"),
        JobSpec(id="b1", submit=0.0, account="b", gpus=8, work=24 * HOUR, min_runtime=600.0, user="u", priority=2),
        JobSpec(id="dbg", submit=1000.0, account="b", gpus=1, work=600.0, min_runtime=300.0, user="u", kind="debug"),
    ]
    config = make_config({"a": 1, "b": 1, "c": 1, "d": 1}, nodes=3, policy=Policy(debug_reclaim=debug_reclaim))
    return simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def test_a_debug_job_of_a_team_running_over_its_share_now_reclaims_from_a_team_served_more() -> None:
    # without the rule b's debug job waits for a natural end (a day); with it, it takes one of
    # a's jobs past its protection at once, by the rule ``reclaim``
    assert _start(_run(False), "dbg") >= 24 * HOUR
    res = _run(True)
    assert _start(res, "dbg") == 1000.0
    evicted = [(e.job, e.rule) for e in res.events if e.event == "preempt" and e.t == 1000.0]
    assert len(evicted) == 1 and evicted[0][0] in ("a1", "a2") and evicted[0][1] == "reclaim"
    assert not any(e.event == "preempt" and e.job == "b1" for e in res.events)
