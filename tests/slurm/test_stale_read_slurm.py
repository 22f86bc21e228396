"""On a real Slurm, a job that Slurm launches between the reconciler's read and its actions
makes that tick's requeue needless, and the tick defers it (``reconcile.stale_read``): the
fidelity gate's CI run of 2026-12-07 requeued a job for GPUs a late launch had taken."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from allotment.backends.actions import Action, ActionResult, ClusterAction
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
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


class LateLaunch(SlurmBackend):
    """The real backend, with something done on the cluster once, between the tick's read
    and its dry run (``between``)."""

    between: Callable[[], None] | None = None

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        if dry_run and self.between is not None and any(
            isinstance(a, ClusterAction) for a in actions
        ):
            hook, self.between = self.between, None
            hook()
        return super().apply(actions, dry_run=dry_run)


@pytest.fixture
def late(tmp_path: Path, repo: Path, clean_cluster: Path) -> Iterator[tuple[Reconciler, LateLaunch]]:  # noqa: F811
    backend = LateLaunch(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
    rec = Reconciler(
        backend,
        GitSource(str(repo), "main", tmp_path / "state"),
        tmp_path / "state",
        Options(tiers_s=TIERS),
    )
    yield rec, backend
    rec.close()


def test_a_job_slurm_launched_after_the_read_defers_the_ticks_requeue(
    late: tuple[Reconciler, LateLaunch],
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
