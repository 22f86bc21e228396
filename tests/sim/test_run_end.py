"""A run without a horizon ends once nothing can change: it used to wake forever for a job whose
nodes left the cluster while it waited (issue 32)."""

from __future__ import annotations

import signal
from types import FrameType

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


def test_a_run_without_a_horizon_ends_when_a_waiting_job_can_never_start() -> None:
    # two 8-GPU nodes; one fails at 50 s for good while a's 16-GPU gang waits behind b's job:
    # the gang can never start again, and the run ends after b's job instead of waking forever
    config = make_config({"a": 1, "b": 1}, nodes=2)
    jobs = [JobSpec(id="x", submit=0.0, account="b", gpus=8, work=100.0, min_runtime=600.0, user="u"),
            JobSpec(id="g", submit=10.0, account="a", gpus=16, work=3600.0, min_runtime=600.0, user="u")]
    def never_ended(signum: int, frame: FrameType | None) -> None:
        raise AssertionError("the run did not end within 30 s")

    old = signal.signal(signal.SIGALRM, never_ended)
    signal.alarm(30)
    try:
        res = simulate(config, Workload.of(jobs, (NodeEvent(50.0, "n001", "unhealthy"),)), keep_events=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert res.metrics["jobs"]["completed"] == 1
    assert not [e for e in res.events if e.event == "start" and e.job == "g"]
    assert max(e.t for e in res.events) <= 200.0
