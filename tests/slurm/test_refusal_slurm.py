"""A job the policy refuses is cancelled on a real Slurm, with the reason on the job and in the
audit log, and nothing else is touched (issue 15 item 4).

Under ``unallocated: false`` a minimum-runtime-0 job (QOS ``unallocated``) is refused at
submission (``core.contract.refusal``, ``Decisions.refusals``), as the simulator rejects it on
arrival; active mode cancels it with rule ``refused``.  The cancel first writes the rule and
the reason into the job's ``AdminComment``, which ``sacct`` keeps after the job is gone."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from allotment.backends.actions import ClusterAction
from allotment.backends.slurm.commands import CANCEL_MARK
from allotment.backends.slurm.parse import HOLD_MARK
from allotment.core.contract import UNALLOCATED_OFF_WHY
from allotment.reconcile.reconciler import Reconciler
from tests.reconcile.repo import commit_all
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_active_slurm import held_sbatch, priority, sbatch
from tests.slurm.test_reconcile_slurm import (  # noqa: F401
    SHORT,
    job_field,
    reconciler,
    repo,
    state,
)

pytestmark = pytest.mark.slurm


def sacct_row(job: str) -> str:
    return sh("sacct", "-X", "-n", "-P", "-j", job, "-o", "State,AdminComment").strip()


def test_a_refused_job_is_cancelled_with_its_reason_and_nothing_else_is_touched(
    reconciler: Reconciler,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    policy = repo / "policies/scheduler.yaml"
    policy.write_text(policy.read_text() + "unallocated: false\n")
    commit_all(repo, "no unallocated work")
    assert reconciler.tick().error is None
    running = sbatch("teamb", SHORT, "--gres=gpu:4")
    reconciler.tick()  # started by Slurm, or by the core when new jobs wait for it
    wait_for("the allocated job runs", lambda: state(running) == "RUNNING", 30)
    before = (job_field(running, "%S"), job_field(running, "%N"), priority(running))
    # both held as job_submit.lua holds new jobs, so Slurm starts neither on its own
    refused = sbatch("teama1", "unallocated", "--gres=gpu:2", "--begin=now+3650days")
    sh("scontrol", "update", f"JobId={refused}", f"AdminComment={HOLD_MARK}")
    allocated = held_sbatch("teama2", "--gres=gpu:2")

    r = reconciler.tick()
    assert r.error is None
    cancels = [x for x in r.results if x.action.kind == "cancel"]
    assert [(x.action.target, x.action.rule, x.code) for x in cancels] == [
        (refused, "refused", "applied")
    ]
    assert cancels[0].action.reason == UNALLOCATED_OFF_WHY
    # the rest of the tick's job actions: the core's ordinary start of the allocated job
    jobs = [x.action for x in r.results if isinstance(x.action, ClusterAction)]
    others = {(a.target, a.rule) for a in jobs if a.kind != "cancel"}
    assert others == {(allocated, "start")}
    wait_for("the refused job is gone", lambda: state(refused) == "", 30)
    wait_for("the allocated job runs", lambda: state(allocated) == "RUNNING", 10, every=0.2)
    assert state(running) == "RUNNING"
    assert (job_field(running, "%S"), job_field(running, "%N"), priority(running)) == before

    # the user finds why on the job itself, after it is gone
    wait_for("sacct has it", lambda: sacct_row(refused).startswith("CANCELLED"), 30)
    assert sacct_row(refused).split("|", 1)[1] == f"{CANCEL_MARK} (refused): {UNALLOCATED_OFF_WHY}"
    # and the operator in the audit log: the intent (dry-run, intent, outcome), once
    audit = [e for e in reconciler.audit.read() if e.get("target") == refused]
    assert {(e["action"], e["rule"], e["reason"]) for e in audit} == {
        ("cancel", "refused", UNALLOCATED_OFF_WHY)
    }
    assert [e.get("result") for e in audit if e.get("phase") == "outcome" and not e["dry_run"]] == [
        "applied"
    ]
    time.sleep(1)
    again = reconciler.tick()
    assert [x for x in again.results if x.action.target in (refused, running)] == []
