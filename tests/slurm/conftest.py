"""One real Slurm cluster for the whole session (brought up by tests/slurm/run.sh, which exports
SLURM_CONF), reset to a clean slate before each test: no jobs, no drained nodes, none of the
accounts or QOS the tests create.  Waits are on conditions with deadlines, never fixed sleeps.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from allotment.backends.protocol import Observation
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner

TEST_ROOT = "org"
TEST_QOS = ("unallocated", "alloc-20s", "alloc-30s")


def sh(*argv: str, check: bool = True) -> str:
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def wait_for(what: str, pred: Callable[[], bool], timeout: float = 60, every: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")


def reset_cluster() -> None:
    sh("scancel", "--user=root", check=False)
    wait_for("empty queue", lambda: not sh("squeue", "-h", "-o", "%i").strip(), timeout=60)
    for node in sh("sinfo", "-h", "-N", "-o", "%N %t").splitlines():
        name, state = node.split()
        if "drain" in state or state in ("drng", "drain", "down"):
            sh("scontrol", "update", f"NodeName={name}", "State=RESUME", check=False)
    sh(
        "sacctmgr",
        "-i",
        "modify",
        "user",
        "where",
        "name=root",
        "set",
        "defaultaccount=root",
        check=False,
    )
    if sh("sacctmgr", "-n", "-P", "show", "account", TEST_ROOT, "format=account").strip():
        sh("sacctmgr", "-i", "delete", "account", "where", f"name={TEST_ROOT}")
    have = set(sh("sacctmgr", "-n", "-P", "show", "qos", "format=name").split())
    for q in sorted(have):
        if q == "unallocated" or q.startswith("alloc-"):
            sh(
                "sacctmgr",
                "-i",
                "modify",
                "user",
                "where",
                "name=root",
                "set",
                "qos=normal",
                "defaultqos=normal",
                check=False,
            )
            sh("sacctmgr", "-i", "delete", "qos", "where", f"name={q}")
    wait_for(
        "nodes idle",
        lambda: all(s in ("idle",) for s in sh("sinfo", "-h", "-N", "-o", "%t").split()),
        timeout=30,
    )


@pytest.fixture(scope="session")
def slurm_conf() -> Path:
    conf = os.environ.get("SLURM_CONF")
    if not conf or not Path(conf).is_file():
        pytest.fail("SLURM_CONF is not set to a running test cluster: run `make test-slurm`")
    return Path(conf)


@pytest.fixture
def clean_cluster(slurm_conf: Path) -> Iterator[Path]:
    reset_cluster()
    yield slurm_conf


class SlurmHarness:
    tiers_s = (20,)

    def __init__(self, conf: Path) -> None:
        self.backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(conf)}, timeout_s=30))
        self.jobs_dir = conf.parent.parent / "jobs"

    def submit(self, account: str, gpus: int, qos: str, *, requeue: bool = True) -> str:
        argv = ["sbatch", "--parsable", "-A", account, "-q", qos, f"--gres=gpu:{gpus}", "-t", "30"]
        argv += ["-o", str(self.jobs_dir / "%j.out"), "--requeue" if requeue else "--no-requeue"]
        return sh(*argv, "--wrap", "sleep 900").strip().split(";")[0]

    def wait(
        self, what: str, pred: Callable[[Observation], bool], timeout: float = 30
    ) -> Observation:
        deadline = time.monotonic() + timeout
        while True:
            obs = self.backend.observe()
            if pred(obs):
                return obs
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.5)

    def set_fairshare_by_hand(self, account: str, fairshare: int) -> None:
        sh(
            "sacctmgr",
            "-i",
            "modify",
            "account",
            "where",
            f"name={account}",
            "set",
            f"fairshare={fairshare}",
        )


@pytest.fixture
def harness(clean_cluster: Path) -> SlurmHarness:
    return SlurmHarness(clean_cluster)
