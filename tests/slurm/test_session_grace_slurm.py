"""Issue 29 on a real Slurm: a session (``--comment kind=interactive``) past its minimum runtime
that must make room receives SIGTERM (the notice), keeps running through the policy's grace, is
then requeued, and its restore hook runs when it starts again (docs/design/interactive.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import make_repo
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_reconcile_slurm import SHORT, TIERS, restarts, state

pytestmark = pytest.mark.slurm
GRACE_S = 20
SESSIONS = f"interactive:\n  kinds: [interactive]\n  grace: {GRACE_S}s\n  restore_hook: allot-restore\n"


@pytest.fixture
def reconciler(tmp_path: Path, clean_cluster: Path) -> Iterator[Reconciler]:
    make_repo(tmp_path / "budgets", extra_policy=SESSIONS)
    backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
    rec = Reconciler(backend, GitSource(str(tmp_path / "budgets"), "main", tmp_path / "state"),
                     tmp_path / "state", Options(tiers_s=TIERS))
    yield rec
    rec.close()


def _session(marks: Path) -> str:
    """A session that records the notice and, started again, runs its restore hook first."""
    hook = marks / "bin" / "allot-restore"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f'#!/bin/bash\necho "$1" > {marks}/$SLURM_JOB_ID.hook.$SLURM_RESTART_COUNT\n')
    hook.chmod(0o755)
    script = marks / "session.sh"
    script.write_text(
        "#!/bin/bash\n"
        f"export PATH={hook.parent}:$PATH\n"
        '[ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] && allot-restore restore\n'
        f"trap 'date +%s > {marks}/$SLURM_JOB_ID.noticed.${{SLURM_RESTART_COUNT:-0}}' TERM\n"
        "while true; do sleep 1 & wait $!; done\n"
    )
    out = sh("sbatch", "--parsable", "-A", "teamb", "-q", SHORT, "--gres=gpu:8", "-t", "30", "-o", "/dev/null",
             "--requeue", "--comment=kind=interactive", str(script))
    return out.strip().split(";")[0]


def _acted(rec: Reconciler, kind: str) -> list[str]:
    return [r.action.target for r in rec.tick().results if r.action.kind == kind and r.code == "applied"]


def test_a_session_gets_sigterm_keeps_its_grace_is_requeued_and_restores(
    reconciler: Reconciler, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    reconciler.tick()
    sessions = [_session(marks) for _ in range(4)]
    wait_for("teamb's sessions fill the cluster", lambda: all(state(j) == "RUNNING" for j in sessions), 30)
    reconciler.tick()  # the ledger starts counting teamb's usage
    waiting = sh("sbatch", "--parsable", "-A", "teama1", "-q", SHORT, "--gres=gpu:8", "-t", "5", "-o", "/dev/null",
                 "--wrap", "sleep 15").strip().split(";")[0]
    noticed: list[str] = []

    def notice() -> bool:
        noticed.extend(_acted(reconciler, "notify"))
        return bool(noticed)

    wait_for("a notice once the 20 s minimum runtime is over", notice, 90, every=1)
    at, job = time.time(), noticed[0]
    wait_for("the session's SIGTERM trap ran", lambda: (marks / f"{job}.noticed.0").exists(), 10)
    assert state(job) == "RUNNING"
    requeued: list[str] = []

    def requeue() -> bool:
        requeued.extend(x for x in _acted(reconciler, "requeue") if x == job)
        assert requeued or state(job) == "RUNNING", "a session stopped inside its grace"
        return bool(requeued)

    wait_for("the requeue after the grace", requeue, GRACE_S + 30, every=1)
    assert time.time() - at >= GRACE_S - 1  # (the reconciler's notice was stamped before `at`)
    assert state(waiting) in ("RUNNING", "PENDING", "")

    def restored() -> bool:
        reconciler.tick()
        return restarts(job) >= 1 and (marks / f"{job}.hook.1").exists()

    wait_for("the requeued session starts again and runs its restore hook", restored, 120, every=2)
    assert (marks / f"{job}.hook.1").read_text().strip() == "restore"
