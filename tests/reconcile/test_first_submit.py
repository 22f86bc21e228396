"""The reconciler remembers a job's first submission across its requeues (Slurm resets
``submit_time`` at a requeue), also while the job is out of sight as its requeue completes."""

from __future__ import annotations

from dataclasses import replace

from allotment.backends.protocol import JobObs, Observation
from allotment.reconcile.first_submit import FORGET_S, FirstSubmissions

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
