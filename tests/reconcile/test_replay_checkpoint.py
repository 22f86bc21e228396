"""The replayed job's checkpoint survives a requeue's kill (issue 30 item 1): the job script is
run as Slurm runs it (``sh``, killed with SIGKILL as a requeue does at the end), no cluster."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from itertools import pairwise
from pathlib import Path

import pytest

from allotment.core.jobs import JobSpec
from allotment.reconcile.replay.submit import submission


def _script(tmp_path: Path, work: float, **kw: object) -> Path:
    job = JobSpec(id="j1", submit=0.0, account="a", gpus=1, work=work, **kw)  # type: ignore[arg-type]
    s = submission(job, speedup=1, gpus_per_node=8, default_min_s=60, ckpt_dir=tmp_path)
    path = tmp_path / "j1.sh"
    path.write_text(s.script)
    return path


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to stall the write")
def test_a_kill_inside_the_checkpoint_write_leaves_the_last_checkpoint_to_resume_from(
    tmp_path: Path,
) -> None:
    ckpt = tmp_path / "j1.ckpt"
    ckpt.write_text("4\n")  # an earlier run did 4 of 8 seconds
    script = _script(tmp_path, 8.0)
    # every write(2) into the checkpoint (or its temporary file) stalls 20 s: the first one
    # (second 5, about 1 s in) is where the kill lands, as a requeue's did on the cluster
    stalled = [
        "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=write",
        "-e", "inject=write:delay_enter=20000000",
        "-P", str(ckpt), "-P", f"{ckpt}.tmp",
    ]  # fmt: skip
    run = subprocess.Popen([*stalled, "sh", str(script)], start_new_session=True)
    try:
        time.sleep(2.5)
        assert run.poll() is None, "the run ended before its write was stalled"
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    begun = time.monotonic()
    again = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=20)
    took = time.monotonic() - begun
    assert again.returncode == 0 and ckpt.read_text().strip() == "8"
    assert took < 6.0, f"the restart redid the work from 0 ({took:.1f} s, 4 were left)"
    assert not (tmp_path / "j1.notes").exists()


@pytest.mark.parametrize("held", ["", "\n", "3x\n", "07\n", "-2\n"])
def test_an_unreadable_checkpoint_restarts_from_zero_says_so_and_does_all_the_work(
    tmp_path: Path, held: str
) -> None:
    ckpt = tmp_path / "j1.ckpt"
    ckpt.write_text(held)  # what a kill inside a plain `echo > ckpt` left, or worse
    script = _script(tmp_path, 2.0)
    begun = time.monotonic()
    run = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=20)
    assert run.returncode == 0 and ckpt.read_text().strip() == "2"
    assert time.monotonic() - begun >= 1.9  # both seconds were worked, not 0 s "COMPLETED"
    assert "not a count of seconds; starting from 0" in run.stderr
    assert "starting from 0" in (tmp_path / "j1.notes").read_text()


def test_each_second_of_a_run_is_stamped_so_a_stopped_machine_shows_as_a_gap(
    tmp_path: Path,
) -> None:
    """The script's own clock, one ``beat`` per second (``replay.stalls`` reads the gaps): a
    run of 3 s stamps 3 seconds about 1 s apart, between its ``start`` and its ``end``."""
    from allotment.reconcile.replay.collect import script_times

    script = _script(tmp_path, 3.0)
    subprocess.run(["sh", str(script)], check=True, timeout=20)
    stamps = script_times((tmp_path / "j1.times").read_text())
    assert [s.kind for s in stamps] == ["start", "beat", "beat", "beat", "end"]
    beats = [s.at for s in stamps if s.kind == "beat"]
    assert all(0.5 < b - a < 1.6 for a, b in pairwise(beats))
