"""Plans and sweeps on a real Slurm job array give the bytes of the local pool, and a failed or
late array is one clear line, never a traceback (plan/executors/slurm.py)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.errors import BackendError
from allotment.plan.executors.protocol import ExecTask
from allotment.plan.executors.slurm import SlurmArray
from tests.plan.gitrepo import GitRepo
from tests.slurm.conftest import sh, wait_for

pytestmark = pytest.mark.slurm

ML = "budgets/acme/ml/budget.yaml"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _arrays() -> list[str]:
    """The allot-sim array tasks Slurm accounted, as 'id_index STATE'."""
    out = sh("sacct", "-n", "-P", "-X", "--name=allot-sim", "-S", "now-1hour", "-o", "JobID,State")
    return sorted(line.replace("|", " ") for line in out.splitlines() if line.strip())


def _new_arrays(before: list[str], n: int) -> list[str]:
    """The array tasks accounted since ``before``, once ``n`` of them have ended (accounting
    trails the queue by a few seconds)."""
    wait_for(f"{n} array tasks in accounting", lambda: sum(
        a not in before and not a.endswith((" PENDING", " RUNNING")) for a in _arrays()) >= n, timeout=30)
    return [a for a in _arrays() if a not in before]


def test_a_plan_on_a_slurm_array_is_the_local_pools_plan_byte_for_byte(
    clean_cluster: Path, tmp_path: Path
) -> None:
    repo = GitRepo.from_data(tmp_path / "repo")
    repo.commit("Initial budget tree", author="pat@acme.example")
    repo.switch("pr", create=True)
    repo.set_share(ML, "vision", 70)
    repo.commit("vision +", author="vera@acme.example")
    before = _arrays()
    outs = {}
    for how in ("local", "slurm"):
        outs[how] = tmp_path / f"plan-{how}.json"
        code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr",
                     "--scenario", "ai2", "--days", "0.5", "--seeds", "1-2", "--at", "2026-01-02",
                     "--format", "json", "--cache-dir", str(tmp_path / f"cache-{how}"),
                     "--executor", how, "--executor-dir", str(tmp_path / "shared"),
                     "--out", str(outs[how])])
        assert code in (0, 1)
    assert outs["slurm"].read_bytes() == outs["local"].read_bytes()
    ran = _new_arrays(before, 4)
    # with no bound on the workers every run is its own array element (impact_units.by_seed)
    assert len(ran) == 4 and all(a.endswith(" COMPLETED") for a in ran), ran
    assert not any((tmp_path / "shared").iterdir())  # read back, then removed


def test_a_sweep_on_a_slurm_array_is_the_local_pools_sweep_byte_for_byte(
    clean_cluster: Path, repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _arrays()
    outs, tables = {}, {}
    for how in ("local", "slurm"):
        outs[how] = tmp_path / f"sweep-{how}.json"
        assert main(["sweep", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.25",
                     "--seeds", "1,2", "--set", "lookback=1d,3d", "--executor", how,
                     "--executor-dir", str(tmp_path / "shared"), "--json", str(outs[how])]) == 0
        tables[how] = capsys.readouterr().out
    assert outs["slurm"].read_bytes() == outs["local"].read_bytes()
    assert tables["slurm"] == tables["local"]
    ran = _new_arrays(before, 4)
    assert len(ran) == 4 and all(a.endswith(" COMPLETED") for a in ran), ran  # 2 values x 2 seeds


def test_a_failed_array_task_is_one_line_naming_the_task_and_its_log(
    clean_cluster: Path, tmp_path: Path
) -> None:
    array = SlurmArray(tmp_path / "shared", poll_s=0.5, timeout_s=120)
    tasks = [ExecTask(_key("good"), "[1, 2]", "the good one"),
             ExecTask(_key("bad"), "not json", "the bad one")]
    with pytest.raises(BackendError) as caught:
        list(array.run(json.loads, tasks))
    msg = str(caught.value)
    assert "\n" not in msg and "Traceback" not in msg
    assert "task 1 (the bad one) JSONDecodeError: Expecting value" in msg
    log = Path(msg.rsplit("log: ", 1)[1])
    assert log.is_file() and "Traceback" in log.read_text()  # the traceback is in the log only


def test_a_task_that_cannot_start_is_reported_with_the_state_slurm_gave_it(
    clean_cluster: Path, tmp_path: Path
) -> None:
    array = SlurmArray(tmp_path / "shared", poll_s=0.5, timeout_s=120, python=str(tmp_path / "no-python"))
    with pytest.raises(BackendError) as caught:
        list(array.run(json.loads, [ExecTask(_key("x"), "[1]", "seed 7")]))
    msg = str(caught.value)
    assert "task 0 (seed 7) ended FAILED exit 127:0 without a result" in msg and "\n" not in msg


def test_an_array_past_its_timeout_is_cancelled_with_one_line(
    clean_cluster: Path, tmp_path: Path
) -> None:
    array = SlurmArray(tmp_path / "shared", poll_s=0.5, timeout_s=3)
    start = time.monotonic()
    with pytest.raises(BackendError) as caught:
        list(array.run(time.sleep, [ExecTask(_key("slow"), 300, "slow")]))
    assert time.monotonic() - start < 30
    assert "1 of 1 tasks not done after 3 s; cancelled" in str(caught.value)
    job = str(caught.value).split()[3].rstrip(":")
    wait_for("the array to leave the queue",
             lambda: not sh("squeue", "-h", "-j", job, "-o", "%i", check=False).strip(), timeout=30)
    wait_for("accounting to say cancelled", lambda: sh(
        "sacct", "-n", "-P", "-X", "-j", f"{job}_0", "-o", "State").startswith("CANCELLED"), timeout=30)


def test_a_bad_sbatch_option_is_exit_3_and_one_line(
    clean_cluster: Path, repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sweep", "--repo", str(repo_root), "--scenario", "ai2", "--days", "0.25",
                 "--seeds", "1", "--executor", "slurm", "--executor-dir", str(tmp_path / "shared"),
                 "--sbatch-args=--partition=nosuch"])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("allot sweep: sbatch failed: ") and "nosuch" in err
