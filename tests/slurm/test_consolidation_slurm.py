"""Consolidation on a real Slurm (``Policy.consolidate``; docs/design/preemption.md,
"Consolidation").  n1 and n2 are full, n3 holds a resumable 4-GPU job of teama1 (``moved``,
20 s minimum runtime) and n4 a protected 4-GPU job of teamb: 8 GPUs are free, 4 on each of n3
and n4, and a whole-node job of teama1 (``blocked``) waits.  Nothing else can start it: every
other job is inside its 10-minute protection, and its own team's work is no reclaim victim.

With ``consolidate: true`` the core requeues ``moved`` once its minimum runtime is over (rule
``consolidate``), ``blocked`` runs on the freed n3, and ``moved`` runs again on n4 once Slurm's
requeue delay (``cred_expire`` + 1 s) is over.  With ``consolidate: false`` nothing is requeued
and ``blocked`` waits.  Each job starts pinned (``-w``) so the layout is the same every run;
``moved``'s pin to n3 also proves that its restart on n4 is the reconciler's (its start pins it
there), not Slurm's own (which would keep it pending behind ``-w n3``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from allotment.backends.actions import ActionResult, ClusterAction
from allotment.reconcile.reconciler import Reconciler
from tests.reconcile.repo import commit_all
from tests.slurm.conftest import wait_for
from tests.slurm.test_active_slurm import CRED_EXPIRE_S, sbatch
from tests.slurm.test_reconcile_slurm import (  # noqa: F401
    LONG,
    SHORT,
    job_field,
    reconciler,
    repo,
    restarts,
    state,
)

pytestmark = pytest.mark.slurm
MIN_RUNTIME_S = 20  # alloc-20s


def _layout(rec: Reconciler) -> tuple[str, str]:
    """The fragmented cluster; returns (moved, blocked) once the former has run past its
    minimum runtime (its start as Slurm reports it)."""
    rec.tick()  # accounts and QOS
    fixed = [sbatch("teamb", LONG, "--gres=gpu:8", "-w", n) for n in ("n1", "n2")]
    fixed.append(sbatch("teamb", LONG, "--gres=gpu:4", "-w", "n4"))
    moved = sbatch("teama1", SHORT, "--gres=gpu:4", "-w", "n3")
    wait_for("the layout runs", lambda: all(state(j) == "RUNNING" for j in [*fixed, moved]), 30)
    blocked = sbatch("teama1", SHORT, "--gres=gpu:8")
    return moved, blocked


def _started_at(rec: Reconciler, job: str) -> float:
    j = rec.backend.observe().job(job)
    assert j is not None and j.start is not None
    return j.start


def _tick(rec: Reconciler) -> list[ActionResult]:
    r = rec.tick()
    assert r.error is None and not [x for x in r.results if x.code == "failed"], r
    return r.results


def _requeues(results: list[ActionResult]) -> list[tuple[str, str, str, str]]:
    return [
        (x.action.target, x.action.rule, x.action.reason, x.code)
        for x in results
        if x.action.kind == "requeue"
    ]


def _starts(results: list[ActionResult]) -> dict[str, tuple[str, ...] | None]:
    """The starts a tick sent: job -> the nodes it is pinned to."""
    return {
        x.action.target: x.action.nodes
        for x in results
        if isinstance(x.action, ClusterAction) and x.action.rule == "start"
    }


def _audited_requeues(rec: Reconciler) -> list[dict[str, object]]:
    lines = (rec.state_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [
        e
        for e in map(json.loads, lines)
        if e.get("action") == "requeue" and e.get("phase") == "outcome"
    ]


def test_a_move_frees_a_node_and_the_moved_job_runs_again_elsewhere(
    reconciler: Reconciler,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    policy = repo / "policies" / "scheduler.yaml"
    policy.write_text(policy.read_text(encoding="utf-8") + "consolidate: true\n", encoding="utf-8")
    commit_all(repo, "consolidate")
    moved, blocked = _layout(reconciler)
    began = _started_at(reconciler, moved)
    ticks: list[list[ActionResult]] = []

    def requeued() -> bool:
        ticks.append(_tick(reconciler))
        return bool(_requeues(ticks[-1]))

    wait_for("the core moves the resumable job", requeued, 60, every=1)
    at = time.time()
    assert at >= began + MIN_RUNTIME_S  # never inside its minimum runtime
    ((target, rule, reason, code),) = _requeues(ticks[-1])
    assert (target, rule, code) == (moved, "consolidate", "applied")
    assert reason == f"moved from n3 to n4 to free n3 for {blocked}"
    assert [(e["target"], e["rule"], e["result"]) for e in _audited_requeues(reconciler)] == [
        (moved, "consolidate", "applied")
    ]
    # the blocked job's start is pinned to the freed node; the moved job's start in the same
    # pass is not sent (it was still running when observed; once requeued, Slurm holds it)
    assert _starts(ticks[-1]) == {blocked: ("n3",)}
    wait_for(
        "the blocked job runs on the freed n3",
        lambda: state(blocked) == "RUNNING" and job_field(blocked, "%N") == "n3",
        15,
        every=0.5,
    )

    restarted: list[float] = []

    def moved_runs_again() -> bool:
        results = _tick(reconciler)
        assert not _requeues(results), "a second requeue"
        if moved in _starts(results):  # the first pass after its requeue delay starts it again
            assert _starts(results)[moved] == ("n4",)
            restarted.append(time.time())
        return state(moved) == "RUNNING"

    wait_for("the moved job runs again", moved_runs_again, CRED_EXPIRE_S + 30, every=1)
    assert restarted and restarted[0] >= at + CRED_EXPIRE_S  # Slurm's requeue delay
    assert (job_field(moved, "%N"), restarts(moved)) == ("n4", 1)
    assert state(blocked) == "RUNNING" and job_field(blocked, "%N") == "n3"


def test_without_consolidation_nothing_moves_and_the_blocked_job_waits(
    reconciler: Reconciler,  # noqa: F811
) -> None:
    moved, blocked = _layout(reconciler)
    began = _started_at(reconciler, moved)
    wait_for(
        "the resumable job is past its minimum runtime",
        lambda: time.time() > began + MIN_RUNTIME_S + 1,
        60,
        every=1,
    )
    for _ in range(3):
        assert _requeues(_tick(reconciler)) == []
        time.sleep(2)  # a scheduling cycle (sched_interval=2)
    assert state(blocked) == "PENDING" and state(moved) == "RUNNING" and restarts(moved) == 0
    assert _audited_requeues(reconciler) == []
