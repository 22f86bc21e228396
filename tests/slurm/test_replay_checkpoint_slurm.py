"""On a real Slurm: a replayed job (``reconcile/replay/submit.py``'s script) requeued mid-run
resumes from its checkpoint and completes its work, not 0 s ``COMPLETED`` (issue 30 item 1;
the kill inside the write itself is stalled and tested without a cluster in
tests/reconcile/test_replay_checkpoint.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.core.jobs import JobSpec
from allotment.reconcile.replay.submit import submission
from tests.slurm.conftest import sh, wait_for

pytestmark = pytest.mark.slurm


def _seconds(elapsed: str) -> int:
    h, m, s = (int(x) for x in elapsed.split(":"))
    return 3600 * h + 60 * m + s


def test_a_requeued_replay_job_resumes_from_its_checkpoint_and_does_all_its_work(
    clean_cluster: Path, tmp_path: Path
) -> None:
    job = JobSpec("k1", 0.0, "root", 1, 10.0, "x", resumable=True)
    s = submission(job, speedup=1, gpus_per_node=8, default_min_s=0, ckpt_dir=tmp_path)
    script = tmp_path / "k1.sh"
    script.write_text(s.script)
    ckpt = tmp_path / "k1.ckpt"
    argv = ["sbatch", "--parsable", "-A", "root", "--requeue", "--gres=gpu:1", "-t", "2"]
    jid = sh(*argv, "-o", "/dev/null", str(script)).strip().split(";")[0]

    def done() -> int:
        text = ckpt.read_text().strip() if ckpt.exists() else ""
        return int(text) if text.isdigit() else 0

    wait_for("4 s of work checkpointed", lambda: done() >= 4, timeout=60, every=0.2)
    sh("scontrol", "requeue", jid)
    wait_for(
        "the job to finish",
        lambda: not sh("squeue", "-h", "-j", jid, check=False).strip(),
        timeout=90,
    )
    runs = [
        line.split("|")
        for line in sh(
            "sacct", "-D", "-X", "-n", "-P", "-j", jid, "-o", "State,Elapsed"
        ).splitlines()
        if line
    ]
    assert [r[0] for r in runs] == ["REQUEUED", "COMPLETED"], runs
    first, last = (_seconds(r[1]) for r in runs)
    assert ckpt.read_text().strip() == "10"
    # the restart did what was left after the last checkpoint, not 0 s and not all 10 s again
    assert 10 - first - 2 <= last <= 10 - 4 + 1, runs
