"""The reconciler against a real Slurm: policy sync, drift, preemption by QOS, requeue past the
minimum runtime, draining, restarts and a dead slurmctld.  Real ``sbatch`` jobs (short sleeps);
waits are conditions with deadlines.  The QOS tiers are 20 s and 10 min so that the minimum
runtime contract can be watched in a test."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import DEFAULT_SHARES, commit_all, make_repo, write_repo
from tests.slurm.conftest import sh, wait_for

pytestmark = pytest.mark.slurm
TIERS = (20, 600)
SHORT, LONG = "alloc-20s", "alloc-10m"


@pytest.fixture
def repo(tmp_path: Path, clean_cluster: Path) -> Path:
    make_repo(tmp_path / "budgets", health_file=str(tmp_path / "health.txt"))
    return tmp_path / "budgets"


@pytest.fixture
def reconciler(tmp_path: Path, repo: Path, clean_cluster: Path) -> Iterator[Reconciler]:
    backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
    rec = Reconciler(
        backend,
        GitSource(str(repo), "main", tmp_path / "state"),
        tmp_path / "state",
        Options(tiers_s=TIERS),
    )
    yield rec
    rec.close()


def submit(account: str, gpus: int, qos: str, seconds: int = 900) -> str:
    out = sh(
        "sbatch",
        "--parsable",
        "-A",
        account,
        "-q",
        qos,
        f"--gres=gpu:{gpus}",
        "-t",
        "30",
        "-o",
        "/dev/null",
        "--wrap",
        f"sleep {seconds}",
    )
    return out.strip().split(";")[0]


def job_field(job: str, fmt: str) -> str:
    return sh("squeue", "-h", "-j", job, "-o", fmt, check=False).strip()


def state(job: str) -> str:
    return job_field(job, "%T")


def restarts(job: str) -> int:
    out = sh("scontrol", "show", "job", job, check=False)
    for word in out.split():
        if word.startswith("Restarts="):
            return int(word.split("=")[1])
    return -1


def assoc_rows() -> set[tuple[str, str, str, str]]:
    out = sh("sacctmgr", "-n", "-P", "show", "assoc", "format=account,parentname,user,fairshare")
    return {tuple(line.split("|")) for line in out.splitlines() if line}  # type: ignore[misc]


# ------------------------------------------------------------------------------- policy --
def test_tree_appears_exactly_changes_after_one_tick_and_drift_is_corrected(
    reconciler: Reconciler, repo: Path
) -> None:
    r = reconciler.tick()
    assert r.error is None and not [x for x in r.results if x.code == "failed"]
    ours = {row for row in assoc_rows() if row[0] in {"org", "proga", "teama1", "teama2", "teamb"}}
    assert ours == {
        ("org", "root", "", "10000"),
        ("proga", "org", "", "6000"),
        ("teamb", "org", "", "4000"),
        ("teama1", "proga", "", "6667"),
        ("teama2", "proga", "", "3333"),
        ("teama1", "", "root", "1"),
        ("teama2", "", "root", "1"),
        ("teamb", "", "root", "1"),
    }
    qos = sh(
        "sacctmgr",
        "-n",
        "-P",
        "show",
        "qos",
        "format=name,preempt,preemptmode,preemptexempttime,usagefactor",
    )
    assert "unallocated||requeue||0.000000" in qos.splitlines()
    # active mode: the tiers preempt nothing by themselves, every requeue is the core's
    assert "alloc-20s||requeue|00:00:20|1.000000" in qos.splitlines()
    assert reconciler.tick().results == []  # idempotent

    write_repo(repo, {**DEFAULT_SHARES, "teama1": 10}, health_file=str(repo.parent / "health.txt"))
    sha = commit_all(repo, "teama1 shrinks")
    assert reconciler.tick().revision == sha
    assert {("teama1", "proga", "", "3333"), ("teama2", "proga", "", "6667")} <= assoc_rows()

    sh("sacctmgr", "-i", "modify", "account", "where", "name=teamb", "set", "fairshare=7")
    r = reconciler.tick()
    assert r.drift == ["modify_account teamb: fairshare 7 -> 4000"]
    assert ("teamb", "org", "", "4000") in assoc_rows()
    assert json.loads((reconciler.state_dir / "status.json").read_text())["drift"] == r.drift


# ---------------------------------------------------------------------------- preemption --
def test_allocated_job_takes_gpus_from_unallocated_work_which_is_requeued_and_finishes(
    reconciler: Reconciler,
) -> None:
    reconciler.tick()
    free = [submit("teamb", 8, "unallocated", seconds=25) for _ in range(4)]
    wait_for(
        "cluster full of unallocated work", lambda: all(state(j) == "RUNNING" for j in free), 30
    )
    reconciler.tick()
    alloc = submit("teama1", 8, SHORT, seconds=10)
    time.sleep(3)  # more than one scheduling cycle (sched_interval=2): Slurm alone preempts nothing
    assert state(alloc) == "PENDING" and all(restarts(j) == 0 for j in free)

    def ticked() -> bool:
        reconciler.tick()
        return state(alloc) == "RUNNING"

    wait_for("allocated job running after the core's requeue", ticked, 30, every=1)
    victims = [j for j in free if restarts(j) >= 1]
    assert len(victims) == 1 and state(victims[0]) == "PENDING"
    reconciler.tick()  # the reconciler must not undo or duplicate anything here
    wait_for("the requeued unallocated job finishes", lambda: state(victims[0]) == "", 90)
    # accounting trails the queue by a few seconds under load (a CI run read RUNNING here)
    wait_for("accounting to say it completed", lambda: sh(
        "sacct", "-n", "-X", "-P", "-j", victims[0], "-o", "State").strip() != "RUNNING", 30)
    done = sh("sacct", "-n", "-X", "-P", "-j", victims[0], "-o", "State")
    assert "COMPLETED" in done


def test_over_served_job_past_min_runtime_is_requeued_and_protected_ones_never(
    reconciler: Reconciler,
) -> None:
    reconciler.tick()
    short = [submit("teamb", 8, SHORT) for _ in range(2)]
    protected = [submit("teamb", 8, LONG) for _ in range(2)]
    jobs = short + protected
    wait_for("teamb fills the cluster", lambda: all(state(j) == "RUNNING" for j in jobs), 30)
    reconciler.tick()  # ledger starts counting teamb's usage
    waiting = [submit("teama1", 8, SHORT) for _ in range(2)]
    # inside the 20 s minimum runtime nothing may move
    r = reconciler.tick()
    assert not [x for x in r.results if x.action.kind == "requeue"]
    time.sleep(0)  # no fixed sleeps: wait on conditions below

    def ticked_requeue() -> bool:
        reconciler.tick()
        return all(state(j) == "RUNNING" for j in waiting)

    wait_for("teama1 gets GPUs from teamb's short jobs", ticked_requeue, 120, every=2)
    assert all(restarts(j) == 0 and state(j) == "RUNNING" for j in protected)
    assert all(restarts(j) >= 1 for j in short)
    audit = [
        e
        for e in reconciler.audit.read()
        if e["action"] == "requeue" and e.get("result") == "applied"
    ]
    assert {e["target"] for e in audit} == set(short)
    assert all(e["rule"] and e["reason"] for e in audit)


# ------------------------------------------------------------------------------- health --
def test_unhealthy_node_takes_no_new_jobs_and_empties_after_min_runtime(
    reconciler: Reconciler, tmp_path: Path
) -> None:
    reconciler.tick()
    first = submit("teama1", 8, SHORT)
    wait_for("first job running", lambda: state(first) == "RUNNING", 30)
    node = job_field(first, "%N")
    (tmp_path / "health.txt").write_text(f"{node} unhealthy ECC errors on GPU 2\n")
    r = reconciler.tick()
    assert ("drain", node) in [
        (x.action.kind, x.action.target) for x in r.results if x.code == "applied"
    ]
    others = [submit("teama2", 8, "unallocated") for _ in range(3)]
    wait_for("three new jobs running", lambda: all(state(j) == "RUNNING" for j in others), 30)
    assert node not in {job_field(j, "%N") for j in others}
    assert state(first) == "RUNNING"  # still protected

    def empty() -> bool:
        reconciler.tick()
        return sh("sinfo", "-h", "-n", node, "-o", "%T").strip() == "drained"

    wait_for(f"{node} empty after the minimum runtime", empty, 60, every=2)
    assert restarts(first) >= 1
    (tmp_path / "health.txt").write_text(f"{node} healthy\n")
    r = reconciler.tick()
    assert ("resume", node) in [(x.action.kind, x.action.target) for x in r.results]
    wait_for("requeued job runs again on the resumed node", lambda: state(first) == "RUNNING", 60)


# ------------------------------------------------------------------------------- faults --
def _start_reconciler(repo: Path, state_dir: Path, conf: Path) -> subprocess.Popen[bytes]:
    argv = [
        sys.executable,
        "-m",
        "allotment.cli.main",
        "reconcile",
        "--backend",
        "slurm",
        "--source",
        str(repo),
        "--state",
        str(state_dir),
        "--interval",
        "1s",
        "--tiers",
        "20s,10m",
        "--command-timeout",
        "5s",
    ]
    with (state_dir.parent / "reconciler.log").open("ab") as log:
        env = {**os.environ, "SLURM_CONF": str(conf)}
        return subprocess.Popen(argv, env=env, stdout=log, stderr=log)


def _ledger(state_dir: Path) -> set[tuple[str, int, int, float]]:
    db = sqlite3.connect(state_dir / "ledger.sqlite")
    try:
        return set(db.execute("SELECT job, run_start, bucket, gpu_hours FROM usage"))
    finally:
        db.close()


def _status(state_dir: Path) -> dict[str, object]:
    try:
        return json.loads((state_dir / "status.json").read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def _cond(state_dir: Path, kind: str) -> dict[str, object]:
    conds = _status(state_dir).get("conditions", [])
    return next((c for c in conds if c["type"] == kind), {})  # type: ignore[union-attr]


def test_killed_reconciler_loses_no_ledger_rows_and_a_dead_slurmctld_stalls_it(
    repo: Path, tmp_path: Path, clean_cluster: Path
) -> None:
    state_dir = tmp_path / "state"
    proc = _start_reconciler(repo, state_dir, clean_cluster)
    try:
        wait_for("first tick", lambda: _cond(state_dir, "Ready").get("status") == "True", 60)
        jobs = [submit("teama1", 4, SHORT), submit("teamb", 4, LONG)]
        # (the ledger also holds earlier tests' jobs, backfilled from sacct on the first tick)
        wait_for("ledger rows", lambda: set(jobs) <= {r[0] for r in _ledger(state_dir)}, 60)
        proc.kill()  # SIGKILL mid-run: no chance to flush anything
        proc.wait(10)
        before = _ledger(state_dir)
        proc = _start_reconciler(repo, state_dir, clean_cluster)
        wait_for("ticks after the restart", lambda: _status(state_dir).get("ticks", 0) >= 3, 60)  # type: ignore[operator]
        after = _ledger(state_dir)
        keys = {(j, s, b) for j, s, b, _ in after}
        assert {(j, s, b) for j, s, b, _ in before} <= keys
        old = {(j, s, b): h for j, s, b, h in before}
        assert all(h >= old.get((j, s, b), 0) for j, s, b, h in after)

        # slurmctld dies: Stalled, with the reason
        ctld_pid = int((clean_cluster.parent.parent / "run/slurmctld.pid").read_text())
        os.kill(ctld_pid, signal.SIGTERM)
        wait_for("Stalled", lambda: _cond(state_dir, "Stalled").get("status") == "True", 90)
        assert _cond(state_dir, "Stalled")["reason"] == "BackendFailure"
        assert _status(state_dir)["last_error"]
        # back: it converges
        sh("slurmctld")
        wait_for(
            "slurmctld answers",
            lambda: subprocess.run(["scontrol", "ping"], capture_output=True).returncode == 0,
            60,
        )
        wait_for(
            "Ready again",
            lambda: (
                _cond(state_dir, "Ready").get("status") == "True"
                and _cond(state_dir, "Stalled").get("status") == "False"
            ),
            120,
        )
        assert all(state(j) in ("RUNNING", "PENDING") for j in jobs)
        # SIGTERM: finishes the tick and exits 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
