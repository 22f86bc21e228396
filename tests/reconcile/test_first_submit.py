"""The reconciler remembers a job's first submission across its requeues (Slurm resets
``submit_time`` at a requeue), also while the job is out of sight as its requeue completes."""

from __future__ import annotations

from dataclasses import replace

from allotment.backends.protocol import JobObs, Observation
from allotment.reconcile.first_submit import FORGET_S, FirstSubmissions
from allotment.reconcile.job_memory import JobMemory

JOB = JobObs("7", "root", "teama1", "q", 8, "running", 100.0, 110.0, 20, True, 0)


def at(t: float, *jobs: JobObs) -> Observation:
    return Observation(t, (), jobs)


def test_a_requeued_job_keeps_its_first_submission_through_completing() -> None:
    first = FirstSubmissions()
    assert first.update(at(120.0, JOB)) == {"7": 100.0}
    assert first.update(at(122.0)) == {"7": 100.0}  # COMPLETING: in neither list
    requeued = replace(JOB, state="pending", submit=122.0, start=None, restarts=1)
    assert first.update(at(124.0, requeued)) == {"7": 100.0}


def test_a_job_first_seen_requeued_is_not_guessed_and_a_gone_job_is_forgotten() -> None:
    first = FirstSubmissions()
    assert first.update(at(120.0, replace(JOB, id="8", restarts=1))) == {}
    first.update(at(120.0, JOB))
    assert first.update(at(120.0 + FORGET_S)) == {}


def test_the_job_a_requeued_job_was_evicted_for_survives_its_completing_tick() -> None:
    # the anti-thrash rule reads it on the very tick the requeued job is pending again
    memory: JobMemory[str] = JobMemory()
    memory.observe(at(120.0, JOB))
    memory.remember("7", "9", 120.0)
    memory.observe(at(122.0))  # COMPLETING: in neither list
    assert memory.values() == {"7": "9"}
    memory.observe(at(124.0, replace(JOB, state="pending", start=None, restarts=1)))
    assert memory.values() == {"7": "9"}
    memory.observe(at(124.0 + FORGET_S - 1))
    assert memory.values() == {"7": "9"}
    memory.observe(at(124.0 + FORGET_S))  # out of sight an hour: gone
    assert memory.values() == {}
