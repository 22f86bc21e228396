"""On a real Slurm, a job that Slurm launches between the reconciler's read and its actions
makes that tick's requeue needless, and the tick defers it (``reconcile.stale_read``): the
fidelity gate's CI run of 2026-12-07 requeued a job for GPUs a late launch had taken."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.backends.actions import ClusterAction
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.commands import NOT_PENDING
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.raced import Raced
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_reconcile_slurm import (  # noqa: F401
    SHORT,
    TIERS,
    repo,
    restarts,
    state,
    submit,
)

pytestmark = pytest.mark.slurm


@pytest.fixture
def late(tmp_path: Path, repo: Path, clean_cluster: Path) -> Iterator[tuple[Reconciler, Raced]]:  # noqa: F811
    backend = Raced(SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30)))
    rec = Reconciler(
        backend,  # type: ignore[arg-type]
        GitSource(str(repo), "main", tmp_path / "state"),
        tmp_path / "state",
        Options(tiers_s=TIERS),
    )
    yield rec, backend
    rec.close()


def test_a_job_slurm_launched_after_the_read_defers_the_ticks_requeue(
    late: tuple[Reconciler, Raced],
) -> None:
    """Unallocated work fills the cluster; teama1's job waits, held for the reconciler.  The
    tick decides to requeue one unallocated job for it.  Between its read and its actions one
    of the others ends and Slurm runs the waiting job there (released, as a late launch of an
    earlier start would be): the requeue is deferred, and the next tick takes nothing."""
    rec, backend = late
    rec.tick()
    free = [submit("teamb", 8, "unallocated", seconds=300) for _ in range(4)]
    wait_for("cluster full of unallocated work", lambda: all(state(j) == "RUNNING" for j in free), 30)
    rec.tick()
    alloc = submit("teama1", 8, SHORT, seconds=120)

    def launch_late() -> None:
        sh("scancel", free[3])
        wait_for("its GPUs free", lambda: state(free[3]) in ("", "COMPLETED", "CANCELLED"), 30)
        # Slurm may run it at once; if it still waits (held for the reconciler), release it
        sh("scontrol", "update", f"jobid={alloc}", "StartTime=now", "Priority=1000000", check=False)
        wait_for("Slurm runs the waiting job", lambda: state(alloc) == "RUNNING", 30, every=0.2)

    backend.between = launch_late
    r = rec.tick()
    assert backend.between is None, "the tick planned no cluster action: nothing was raced"
    codes = {(x.action.kind, x.action.target): x.code for x in r.results}
    deferred = [t for (k, t), c in codes.items() if k == "requeue" and c == "deferred"]
    assert len(deferred) == 1 and deferred[0] in free[:3], codes
    assert codes[("set_priority", alloc)] == "unchanged"
    assert all(restarts(j) == 0 and state(j) == "RUNNING" for j in free[:3])
    again = rec.tick()  # a fresh read: teama1 runs, nothing to take
    assert not [x for x in again.results if x.action.kind in ("requeue", "cancel")]
    assert all(restarts(j) == 0 and state(j) == "RUNNING" for j in free[:3])
    lines = [e for e in rec.audit.read() if e.get("result") == "deferred"]
    assert [(e["action"], e["target"]) for e in lines] == [("requeue", deferred[0])]


def test_an_update_slurm_refuses_because_the_job_already_ran_is_unchanged(
    late: tuple[Reconciler, Raced],
) -> None:
    """The race inside one apply: checked pending, launched before the ``scontrol update``
    landed.  Slurm refuses it (not pending; with ``disable_job_shrink``, its ``ReqNodeList`` as a
    shrink "not supported"); the re-read finds the job running, which says nothing of this
    update: the run is an earlier decision's, so the start is ``unchanged``, not "took effect"
    (seed 13, 2026-12-07: job 46, whose update without that parameter left a RESIZING record)."""
    rec, backend = late
    rec.tick()
    job = submit("teama1", 8, SHORT, seconds=120)
    if state(job) != "RUNNING":
        sh("scontrol", "update", f"jobid={job}", "StartTime=now", check=False)
    wait_for("it runs", lambda: state(job) == "RUNNING", 30, every=0.2)
    obs = backend.observe()
    seen = obs.job(job)
    assert seen is not None
    stale = replace(obs, jobs=tuple(replace(j, state="pending") if j.id == job else j for j in obs.jobs))
    start = ClusterAction("set_priority", job, "start", "fits free GPUs", value=1_750_000_000,
                          nodes=seen.nodes, release=True)
    res = backend.inner._one_cluster(start, stale, False)
    assert res.code == "unchanged" and any(m in res.message for m in NOT_PENDING), res
    # and with ``disable_job_shrink`` (tests/slurm/up.sh, as docs/operators-guide.md asks) the
    # refused update did not touch the run: no resize record, the same nodes
    assert observed_nodes(job) == seen.nodes
    wait_for("accounting to list the run", lambda: bool(sacct_states(job)), 30)
    assert "RESIZING" not in sacct_states(job)


def observed_nodes(job: str) -> tuple[str, ...]:
    return tuple(sh("squeue", "-h", "-j", job, "-o", "%N").split())


def sacct_states(job: str) -> list[str]:
    out = sh("sacct", "-D", "-X", "-n", "-P", "-j", job, "-o", "State")
    return [x.split()[0] for x in out.split() if x]
