"""On a real Slurm: "now" is slurmctld's clock (``sdiag``), a skew beyond the bound stops all job
actions, the ledger is backfilled from ``sacct``, and a user named ``_svc`` (valid by the
config's rule) is accepted (issue 14 items 6, 9 and 11)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import commit_all, make_repo
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_reconcile_slurm import LONG, SHORT, TIERS, state, submit

pytestmark = pytest.mark.slurm
HOUR = 3600.0


@pytest.fixture
def repo(tmp_path: Path, clean_cluster: Path) -> Path:
    make_repo(tmp_path / "budgets")
    return tmp_path / "budgets"


@pytest.fixture
def make(tmp_path: Path, repo: Path, clean_cluster: Path) -> Iterator[Callable[..., Reconciler]]:
    made: list[Reconciler] = []

    def build(ahead_s: float = 0.0, **kw: float) -> Reconciler:
        backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
        rec = Reconciler(
            backend,
            GitSource(str(repo), "main", tmp_path / "state"),
            tmp_path / "state",
            Options(tiers_s=TIERS, **kw),  # type: ignore[arg-type]
            clock=lambda: time.time() + ahead_s,
        )
        made.append(rec)
        return rec

    yield build
    for r in made:
        r.close()


def _fill_and_wait(extra_pending: bool = True) -> tuple[list[str], float]:
    jobs = [submit("teamb", 8, LONG) for _ in range(4)]
    wait_for("cluster full", lambda: all(state(j) == "RUNNING" for j in jobs), 30)
    started = time.time()
    if extra_pending:
        submit("teama1", 8, LONG)  # under-served: the core wants room for it
    return jobs, started


def test_an_hour_of_clock_skew_neither_requeues_protected_jobs_nor_inflates_the_ledger(
    make: Callable[..., Reconciler],
) -> None:
    make().tick()  # policy in place (clocks agree)
    jobs, started = _fill_and_wait()
    # the bound raised past the skew: decisions must still be on slurmctld's clock
    ahead = make(ahead_s=HOUR, max_skew_s=2 * HOUR)
    result = ahead.tick()
    assert result.skew is not None and abs(result.skew.skew_s + HOUR) < 60
    assert [r for r in result.results if r.action.kind == "requeue"] == []
    assert all(state(j) == "RUNNING" for j in jobs)  # inside their 10-minute protection
    used = 32 * (time.time() - started + 10) / HOUR  # at most what really ran
    assert ahead.ledger.usage(time.time(), 86400).get("teamb", 0.0) < max(used, 0.5)
    # and with the default bound it refuses to act at all
    ahead.close()
    strict = make(ahead_s=HOUR)
    result = strict.tick()
    assert result.skew is not None and not result.skew.ok
    assert [r for r in result.results if r.action.kind in ("requeue", "set_priority")] == []
    stalled = strict.status.condition("Stalled")
    assert stalled is not None and stalled.status and stalled.reason == "ClockSkew"


def test_a_job_that_ran_while_the_reconciler_was_down_is_charged_from_sacct(
    make: Callable[..., Reconciler],
) -> None:
    first = make()
    first.tick()  # charges what earlier tests ran in the window, too: measured as a baseline
    before = first.ledger.usage(time.time(), 86400).get("teamb", 0.0)
    first.close()  # down from here
    job = submit("teamb", 8, SHORT, seconds=4)
    wait_for(
        "the job in sacct as completed",
        lambda: "COMPLETED" in sh("sacct", "-n", "-X", "-j", job, "-o", "state", check=False),
        60,
    )
    ran = sh("sacct", "-n", "-X", "-j", job, "-o", "elapsedraw").split()[0]
    back = make()
    back.tick()
    usage = back.ledger.usage(time.time(), 86400)
    assert usage.get("teamb", 0.0) - before == pytest.approx(8 * int(ran) / HOUR, abs=1e-6)


def test_a_user_named_with_a_leading_underscore_is_accepted_by_slurm(
    make: Callable[..., Reconciler], repo: Path
) -> None:
    leaf = repo / "budgets/org/teamb/budget.yaml"
    leaf.write_text(leaf.read_text() + "  - _svc\n", encoding="utf-8")
    sha = commit_all(repo, "a service account")
    rec = make()
    try:
        result = rec.tick()
        assert result.error is None and [r for r in result.results if r.code == "failed"] == []
        assert rec.status.last_applied_revision == sha
        assoc = sh("sacctmgr", "-n", "-P", "show", "assoc", "where", "user=_svc", "format=account")
        assert assoc.split() == ["teamb"]
    finally:
        sh("sacctmgr", "-i", "delete", "user", "_svc", check=False)
