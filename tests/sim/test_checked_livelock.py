"""The checked simulator stops a run that goes round in circles instead of hanging the suite.

Stop 48 found a hypothesis example of ``test_invariants`` that never ended (two jobs evicting each
other for a hold for ever); the suite hung rather than failed.  These drive the checked run's
progress check with real decision records, past each bound."""

from __future__ import annotations

import pytest

from allotment.core.decisions import Decisions, Preemption
from allotment.core.jobs import JobSpec
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.checked import (
    MAX_PASSES_AT_ONE_INSTANT,
    MAX_PREEMPTIONS_OF_ONE_JOB,
    CheckedSim,
    Livelock,
)


def _sim() -> CheckedSim:
    job = JobSpec(id="a", submit=0.0, account="t0", gpus=1, work=60.0, user="u")
    return CheckedSim(make_config({"t0": 1}, nodes=1, gpus_per_node=4), Workload.of([job]))


def test_a_job_preempted_past_the_bound_stops_the_run() -> None:
    sim = _sim()
    sim.last_decisions = Decisions(preemptions=(Preemption("a", "b", "reservation", 0.0, "hold"),))
    for i in range(MAX_PREEMPTIONS_OF_ONE_JOB):
        sim._check_progress(float(i))  # one preemption a pass, time moving on: fine up to the bound
    with pytest.raises(Livelock, match="a preempted 101 times"):
        sim._check_progress(float(MAX_PREEMPTIONS_OF_ONE_JOB))


def test_passes_at_one_instant_past_the_bound_stop_the_run() -> None:
    sim = _sim()
    sim.last_decisions = Decisions()
    for _ in range(MAX_PASSES_AT_ONE_INSTANT):
        sim._check_progress(5.0)
    sim._check_progress(6.0)  # time moved on: the count starts again
    for _ in range(MAX_PASSES_AT_ONE_INSTANT - 1):
        sim._check_progress(6.0)
    with pytest.raises(Livelock, match=r"passes at 6\.0"):
        sim._check_progress(6.0)
