"""Active mode on a real Slurm does what the core decided (issue 15): a job the core starts is
started by Slurm's next scheduling cycle even behind a blocked bigger job, a quiet tick rewrites
no priority, multi-node shapes and time limits reach the core, a requeued job waits out
``cred_expire`` + 1 s and is left out of the pass meanwhile; a job the core starts runs on the
nodes the core placed it on, also when it was held for the reconciler at submission."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from allotment.backends.protocol import JobObs
from allotment.backends.slurm.parse import HOLD_MARK
from allotment.reconcile.active import startable
from allotment.reconcile.pinned_order import PINNED_FLOOR
from allotment.reconcile.reconciler import Reconciler
from tests.reconcile.repo import commit_all
from tests.slurm.conftest import sh, wait_for
from tests.slurm.test_reconcile_slurm import (  # noqa: F401
    SHORT,
    job_field,
    reconciler,
    repo,
    state,
)

pytestmark = pytest.mark.slurm
CRED_EXPIRE_S = 10  # tests/slurm/up.sh: AuthInfo=...,cred_expire=10


def sbatch(account: str, qos: str, *shape: str, minutes: int = 30, seconds: int = 900) -> str:
    argv = ["sbatch", "--parsable", "-A", account, "-q", qos, "-t", str(minutes), "-o", "/dev/null"]
    return sh(*argv, *shape, "--wrap", f"sleep {seconds}").strip().split(";")[0]


def priority(job: str) -> int:
    return int(sh("squeue", "-h", "-j", job, "-o", "%Q").strip() or 0)


def observed(rec: Reconciler, job: str) -> JobObs:
    j = rec.backend.observe().job(job)
    assert j is not None, f"job {job} not in squeue"
    return j


def _state_seen(rec: Reconciler, job: str) -> str | None:
    j = rec.backend.observe().job(job)
    return None if j is None else j.state


def test_a_job_the_core_starts_runs_within_a_cycle_ahead_of_a_blocked_big_job(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    reconciler.tick()
    hogs = [sbatch("teamb", SHORT, "--gres=gpu:8") for _ in range(3)]
    wait_for("n1-n3 busy", lambda: all(state(j) == "RUNNING" for j in hogs), 30)
    big = sbatch("teama1", SHORT, "-N", "2", "--gres=gpu:8")
    reconciler.tick()  # the 16-GPU job is ranked first and pinned
    assert priority(big) >= PINNED_FLOOR and state(big) == "PENDING"
    debug = sbatch("teama2", SHORT, "--gres=gpu:1", minutes=1)
    r = reconciler.tick()
    started = [x.action.target for x in r.results if x.action.rule == "start"]
    if started:  # (else Slurm's own backfill started it before the tick saw it pending)
        assert started == [debug] and priority(debug) > priority(big)
    else:
        assert state(debug) == "RUNNING"
    t0 = time.monotonic()
    wait_for("the debug job runs", lambda: state(debug) == "RUNNING", 5, every=0.2)
    assert time.monotonic() - t0 <= 3  # sched_interval=2: within one scheduling cycle
    assert state(big) == "PENDING"


def test_a_quiet_tick_sets_no_priority(reconciler: Reconciler) -> None:  # noqa: F811
    reconciler.tick()
    hogs = [sbatch("teamb", SHORT, "--gres=gpu:8") for _ in range(4)]
    wait_for("cluster full", lambda: all(state(j) == "RUNNING" for j in hogs), 30)
    waiting = [sbatch(a, SHORT, "--gres=gpu:4") for a in ("teama1", "teama2") * 3]
    first = reconciler.tick()
    assert {x.action.target for x in first.results if x.action.kind == "set_priority"} == set(
        waiting
    )
    again = reconciler.tick()
    assert [x for x in again.results if x.action.kind == "set_priority"] == []


def test_multi_node_shapes_and_time_limits_reach_the_core(reconciler: Reconciler) -> None:  # noqa: F811
    reconciler.tick()
    wide = sbatch("teama1", SHORT, "-N", "2", "--gres=gpu:8", minutes=7)
    uneven = sbatch("teama2", SHORT, "-N", "2", "--gpus=12", minutes=9)
    wait_for("both running", lambda: state(wide) == state(uneven) == "RUNNING", 30)
    w, u = observed(reconciler, wide), observed(reconciler, uneven)
    assert (w.gpus, w.gpus_per_node, w.node_gpus, w.time_limit_s) == (16, 8, (8, 8), 420.0)
    assert u.gpus == 12 and sorted(u.node_gpus) == [4, 8] and u.time_limit_s == 540.0
    queued = sbatch("teamb", SHORT, "-N", "2", "--gres=gpu:8")  # 16 GPUs, only 4 free
    j = observed(reconciler, queued)
    assert (j.state, j.gpus, j.gpus_per_node) == ("pending", 16, 8)


def test_a_requeued_job_waits_out_cred_expire_and_is_left_out_meanwhile(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    reconciler.tick()
    job = sbatch("teama1", SHORT, "--gres=gpu:8")
    wait_for("running", lambda: state(job) == "RUNNING", 30)
    sh("scontrol", "requeue", job)
    at = time.time()
    # RUNNING -> COMPLETING (not observed: neither running nor pending) -> PENDING
    wait_for("pending again", lambda: _state_seen(reconciler, job) == "pending", 30)
    obs = reconciler.backend.observe()
    j = obs.job(job)
    assert j is not None and j.restarts == 1 and j.eligible is not None
    assert at + CRED_EXPIRE_S - 1 <= j.eligible <= at + CRED_EXPIRE_S + 3
    if obs.at < j.eligible:  # the snapshot leaves out what is not startable
        assert not startable(j, obs.at)
    wait_for("it runs again after the delay", lambda: state(job) == "RUNNING", 30)
    assert time.time() >= at + CRED_EXPIRE_S


def test_max_gpus_becomes_grptres_and_slurm_holds_the_team_to_it(
    reconciler: Reconciler,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    org = repo / "budgets/org/budget.yaml"
    org.write_text(
        org.read_text().replace(
            "  teamb:\n    share: 40\n", "  teamb:\n    share: 40\n    max_gpus: 12\n"
        )
    )
    commit_all(repo, "teamb capped at 12 GPUs")
    r = reconciler.tick()
    assert r.error is None and not [x for x in r.results if x.code == "failed"]
    rows = sh(
        "sacctmgr", "-n", "-P", "show", "assoc", "where", "account=teamb", "format=user,grptres"
    )
    assert "|gres/gpu=12" in rows.splitlines()
    assert [x for x in reconciler.tick().results if x.action.kind.endswith("account")] == []
    first = sbatch("teamb", SHORT, "--gres=gpu:8")
    second = sbatch("teamb", SHORT, "--gres=gpu:8")
    wait_for("the first runs", lambda: state(first) == "RUNNING", 30)
    reason = sh("squeue", "-h", "-j", second, "-o", "%r").strip()
    assert state(second) == "PENDING" and reason.startswith("AssocGrp")


def test_a_cap_cleared_while_the_account_moves_is_lifted_in_slurmctld_too(
    reconciler: Reconciler,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    org = repo / "budgets/org/budget.yaml"
    capped = org.read_text()
    org.write_text(
        capped.replace("  teamb:\n    share: 40\n", "  teamb:\n    share: 40\n    max_gpus: 12\n")
    )
    commit_all(repo, "teamb capped")
    reconciler.tick()
    # teamb moves under proga and loses its cap in one commit
    org.write_text(capped.replace("  teamb:\n    share: 40\n", ""))
    proga = repo / "budgets/org/proga/budget.yaml"
    proga.write_text(proga.read_text() + "  teamb:\n    share: 10\n")
    (repo / "budgets/org/proga/teamb").mkdir()
    (repo / "budgets/org/teamb/budget.yaml").rename(repo / "budgets/org/proga/teamb/budget.yaml")
    commit_all(repo, "teamb moves under proga, uncapped")
    r = reconciler.tick()
    assert r.error is None and not [x for x in r.results if x.code == "failed"]
    ctld = sh("scontrol", "show", "assoc_mgr", "accounts=teamb", "flags=assoc")
    account_line = ctld.split("UserName=root")[0]  # the account's own association comes first
    assert "ParentAccount=proga" in account_line
    assert "gres/gpu=N(" in account_line  # no cap left in the controller, not only in the DB


def test_a_held_new_job_is_released_onto_the_node_the_core_placed_it_on(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    """The core's best fit puts a 2-GPU job on n3 (2 GPUs free); Slurm's own selection packs
    CPUs and takes n1 (7 GPUs but only 1 of 16 CPUs free; checked by hand: without the pin the
    job ran on n1).  Held as job_submit.lua holds it (a begin time ten years out and the mark),
    the job is startable for the core, and the start releases it onto n3."""
    reconciler.tick()
    hogs = [
        sbatch("teamb", SHORT, "--gres=gpu:6", "-w", "n3"),
        sbatch("teamb", SHORT, "--gres=gpu:1", "-c", "15", "-w", "n1"),
    ]
    wait_for("the hogs run", lambda: all(state(h) == "RUNNING" for h in hogs), 30)
    small = sbatch("teama1", SHORT, "--gres=gpu:2", "--begin=now+3650days")
    sh("scontrol", "update", f"JobId={small}", f"AdminComment={HOLD_MARK}")
    j = observed(reconciler, small)
    assert j.state == "pending" and j.eligible is None and startable(j, time.time())
    r = reconciler.tick()
    start = [x for x in r.results if x.action.rule == "start" and x.action.target == small]
    assert [x.code for x in start] == ["applied"] and start[0].action.nodes == ("n3",)
    wait_for("the job runs", lambda: state(small) == "RUNNING", 10, every=0.2)
    assert job_field(small, "%N") == "n3"


def held_sbatch(account: str, *shape: str) -> str:
    """A job as job_submit.lua leaves it: begin time HOLD_S out, marked."""
    job = sbatch(account, SHORT, *shape, "--begin=now+3650days")
    sh("scontrol", "update", f"JobId={job}", f"AdminComment={HOLD_MARK}")
    return job


def test_a_requeued_job_is_held_after_its_delay_until_the_core_starts_it(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    """Without the hold, Slurm started a requeued job the moment its requeue delay ended, on
    nodes of its own choosing, before the core's next tick."""
    reconciler.tick()
    job = held_sbatch("teama1", "--gres=gpu:8")
    reconciler.tick()
    wait_for("the core started it", lambda: state(job) == "RUNNING", 10, every=0.2)
    sh("scontrol", "requeue", job)
    at = time.time()
    wait_for("pending again", lambda: _state_seen(reconciler, job) == "pending", 30)
    r = reconciler.tick()
    (hold,) = [x for x in r.results if x.action.target == job]
    assert hold.code == "applied" and hold.action.hold_eligible is not None
    j = observed(reconciler, job)
    assert j.eligible is not None and at + CRED_EXPIRE_S - 1 <= j.eligible <= at + CRED_EXPIRE_S + 3
    wait_for("the delay is over", lambda: time.time() > j.eligible + 4, 30)  # type: ignore[operator]
    assert state(job) == "PENDING"  # Slurm's cycles (sched_interval=2) did not start it
    reconciler.tick()
    wait_for("the core started it again", lambda: state(job) == "RUNNING", 10, every=0.2)
