"""The within-team order on a real Slurm (issue 28, item 3): what a user declares with Slurm's own
fields orders a team's jobs as in the simulator.  A job waiting on ``--dependency`` lends its
declared priority to the short job it waits for, which starts before the team's older work; a
job the config boosts starts before its team's older work.  The cluster is kept full by another
team's jobs until the order is pinned, so Slurm cannot start anything of its own accord; then one
node is freed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from allotment.reconcile.pinned_order import PINNED_FLOOR
from allotment.reconcile.reconciler import Reconciler
from tests.reconcile.repo import commit_all
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_active_slurm import observed, priority, sbatch
from tests.slurm.test_reconcile_slurm import (  # noqa: F401
    SHORT,
    reconciler,
    repo,
    state,
)

pytestmark = pytest.mark.slurm


def _full_cluster(rec: Reconciler) -> list[str]:
    """Every node busy with another team's 8-GPU jobs (nothing of teama1 can start)."""
    rec.tick()
    hogs = [sbatch("teamb", SHORT, "--gres=gpu:8") for _ in range(4)]
    wait_for("n1-n4 busy", lambda: all(state(j) == "RUNNING" for j in hogs), 30)
    return hogs


def _free_one_node_and_see_who_starts(rec: Reconciler, hogs: list[str], first: str, older: str) -> None:
    """The core's order is pinned in Slurm (``first`` above ``older``); a node frees and ``first``
    runs on it while ``older`` still waits."""
    rec.tick()
    assert PINNED_FLOOR <= priority(older) < priority(first), (priority(first), priority(older))
    sh("scancel", hogs[0])
    wait_for("a hog gone", lambda: state(hogs[0]) in ("", "COMPLETED", "CANCELLED"), 30)
    for _ in range(10):
        rec.tick()
        if state(first) == "RUNNING":
            break
        wait_for("a scheduling cycle", lambda: state(first) == "RUNNING", 3)
    assert state(first) == "RUNNING" and state(older) == "PENDING"


def test_a_short_prerequisite_of_a_high_priority_job_starts_before_older_work(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    hogs = _full_cluster(reconciler)
    older = sbatch("teama1", SHORT, "--gres=gpu:8", minutes=30)
    sh("sleep", "1")
    prereq = sbatch("teama1", SHORT, "--gres=gpu:8", minutes=5)
    urgent = sh("sbatch", "--parsable", "-A", "teama1", "-q", SHORT, "--gres=gpu:8", "-t", "60", "-o", "/dev/null",
                f"--dependency=afterok:{prereq}", "--comment", "allot.priority=10", "--wrap", "sleep 900").strip()
    got = observed(reconciler, urgent)
    assert (got.depends_on, got.declared_priority, got.reason) == ((prereq,), 10, "Dependency")
    _free_one_node_and_see_who_starts(reconciler, hogs, prereq, older)
    assert state(urgent) == "PENDING"  # Slurm still holds it for its dependency


def test_a_boosted_job_starts_before_its_teams_older_work(
    reconciler: Reconciler,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    hogs = _full_cluster(reconciler)
    older = sbatch("teama1", SHORT, "--gres=gpu:8")
    sh("sleep", "1")
    boosted = sbatch("teama1", SHORT, "--gres=gpu:8")
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(microsecond=0)
    (repo / "policies" / "boosts.yaml").write_text(
        f"boosts:\n  - target: job:{boosted}\n    amount: 2\n    expires: {expires.isoformat()}\n"
        "    reason: paper deadline\n    approver: lead@example.com\n", encoding="utf-8")
    commit_all(repo, f"boost job {boosted}")
    _free_one_node_and_see_who_starts(reconciler, hogs, boosted, older)
