"""Issue 29's dedicated pool on a real Slurm, the reconciler in active mode (``core.session_pool``;
docs/design/interactive.md, "The dedicated pool"): ``interactive.pool: 1`` reserves n4, the last
of n[1-4] (and ``interactive.pool: [n4]`` names it).  A session (``--comment kind=interactive``) starts there although n1 is free; other
work borrows the idle pool node only when no node outside it fits; and a session that then waits
takes the node back at once: the borrowed job is requeued inside its own minimum runtime (lent
work has no protection) and the session runs on n4.

Jobs are held as ``job_submit.lua`` holds them (a begin time ten years out and the mark), so it
is the core that starts each one, on the nodes it chose, and not Slurm's own selection."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.parse import HOLD_MARK
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler, TickResult
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import make_repo
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_reconcile_slurm import SHORT, TIERS, job_field, state

pytestmark = pytest.mark.slurm
POOL = "interactive:\n  kinds: [interactive]\n  pool: {}\n"
TIER_S = TIERS[0]  # the minimum runtime of every job here (QOS alloc-20s)


@pytest.fixture(params=["1", "[n4]"], ids=["by-count", "by-name"])
def reconciler(request: pytest.FixtureRequest, tmp_path: Path, clean_cluster: Path) -> Iterator[Reconciler]:
    make_repo(tmp_path / "budgets", extra_policy=POOL.format(request.param))
    backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
    rec = Reconciler(backend, GitSource(str(tmp_path / "budgets"), "main", tmp_path / "state"),
                     tmp_path / "state", Options(tiers_s=TIERS))
    yield rec
    rec.close()


def held(account: str, gpus: int, *extra: str) -> str:
    """A job as job_submit.lua leaves it: held for the reconciler, which alone starts it."""
    job = sh("sbatch", "--parsable", "-A", account, "-q", SHORT, f"--gres=gpu:{gpus}", "-t", "30",
             "-o", "/dev/null", "--begin=now+3650days", *extra, "--wrap", "sleep 900").strip().split(";")[0]
    sh("scontrol", "update", f"JobId={job}", f"AdminComment={HOLD_MARK}")
    return job


def session(gpus: int) -> str:
    return held("teamb", gpus, "--comment=kind=interactive")


def started_on(report: TickResult, job: str) -> tuple[str, ...] | None:
    """The nodes the tick's applied start of ``job`` pinned it to; None: no start of it."""
    for r in report.results:
        if r.action.rule == "start" and r.action.target == job and r.code == "applied":
            return r.action.nodes
    return None


def runs_on(job: str, node: str) -> bool:
    return state(job) == "RUNNING" and job_field(job, "%N") == node


def test_a_session_starts_on_the_pool_others_borrow_it_last_and_give_it_back_at_once(
    reconciler: Reconciler,
) -> None:
    reconciler.tick()
    # 1. A session starts on the pool node, n4, though best fit alone would take n1.
    first = session(2)
    assert started_on(reconciler.tick(), first) == ("n4",)
    wait_for("the session runs on n4", lambda: runs_on(first, "n4"), 10, every=0.2)
    sh("scancel", first)
    wait_for("n4 idle again", lambda: not job_field(first, "%T"), 30)

    # 2. Other work borrows the pool only when nothing outside it fits.
    hogs = [held("teama2", 8), held("teama2", 8), held("teama2", 6)]
    placed = reconciler.tick()
    assert sorted(started_on(placed, h) or ("-",) for h in hogs) == [("n1",), ("n2",), ("n3",)]
    wait_for("n1-n3 taken", lambda: all(state(h) == "RUNNING" for h in hogs), 10, every=0.2)
    small = held("teama1", 2)
    assert started_on(reconciler.tick(), small) == ("n3",)  # 2 GPUs still free outside the pool
    wait_for("the small job runs on n3", lambda: runs_on(small, "n3"), 10, every=0.2)
    borrower = held("teama1", 8)
    assert started_on(reconciler.tick(), borrower) == ("n4",)  # no node outside the pool fits
    wait_for("the borrower runs on n4", lambda: runs_on(borrower, "n4"), 10, every=0.2)
    lent_at = time.time()

    # 3. A waiting session takes the pool back at once: the borrower is requeued inside its
    #    own minimum runtime (it is lent, unprotected), the hogs on n1-n3 are not touched.
    waiting = session(4)
    taken = [r for r in reconciler.tick().results if r.action.kind == "requeue" and r.code == "applied"]
    assert [(r.action.target, r.action.rule) for r in taken] == [(borrower, "session-pool")]
    assert time.time() - lent_at < TIER_S
    wait_for("the borrower leaves n4", lambda: state(borrower) != "RUNNING", 30, every=0.2)

    def session_runs() -> bool:
        reconciler.tick()
        return runs_on(waiting, "n4")

    wait_for("the waiting session runs on n4", session_runs, 30, every=1)
    assert all(state(h) == "RUNNING" for h in (*hogs, small))
