"""``allot explain JOB --state DIR`` on a real Slurm names the Slurm job id: the reconciler keeps
its last observation (``observation.json``) in the state dir, whatever the backend, and the view
reads it back (before, only the simulated backend's ``sim.json`` held the jobs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.reconcile.observation_file import load_observation
from allotment.reconcile.reconciler import Reconciler
from tests.slurm.conftest import wait_for
from tests.slurm.test_reconcile_slurm import SHORT, reconciler, repo, state, submit  # noqa: F401

pytestmark = pytest.mark.slurm


def test_explain_on_live_state_names_the_slurm_job_id(
    reconciler: Reconciler, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    reconciler.tick()
    job = submit("teama1", 8, SHORT)
    wait_for("the job runs", lambda: state(job) == "RUNNING", 30)
    reconciler.tick()
    obs = load_observation(tmp_path / "state")
    assert obs is not None and obs.job(job) is not None and obs.job(job).state == "running"  # type: ignore[union-attr]
    capsys.readouterr()
    assert main(["explain", job, "--state", str(tmp_path / "state")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"job {job}: running for ") and "charged to teama1" in out
