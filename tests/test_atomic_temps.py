"""Issue 32, item 8: a kill -9 during an atomic write leaves a temporary file; the folder's
writer removes every such file when it starts again, and nothing else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from allotment.atomic_file import remove_stale_temps, temp_beside

WRITER = """
import sys
from pathlib import Path
from allotment import atomic_file

real = atomic_file.os.replace
def stop_before_rename(src, dst):
    print("ready", flush=True)
    sys.stdin.read()  # killed here, between the temporary file and the rename
    real(src, dst)

atomic_file.os.replace = stop_before_rename
atomic_file.write_text(Path(sys.argv[1]), "x" * 100_000, durable=True)
"""


def test_kill_9_during_a_write_leaves_a_temp_file_the_next_start_removes(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    target.write_text("{}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env=env) as p:
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        p.send_signal(signal.SIGKILL)
        p.wait()
    left = [q for q in tmp_path.iterdir() if q.name != "status.json"]
    assert len(left) == 1 and left[0].stat().st_size == 100_000  # what the issue saw
    keep = [tmp_path / "sim.json", tmp_path / ".hidden.tmp", tmp_path / "x.1234567890ab.tmp"]
    for q in keep:
        q.write_text("mine")
    assert remove_stale_temps(tmp_path) == left
    assert sorted(tmp_path.iterdir()) == sorted([target, *keep])
    assert target.read_text() == "{}"


def test_every_name_temp_beside_makes_is_one_remove_stale_temps_removes(tmp_path: Path) -> None:
    for name in ("status.json", "a.b.c", ".dot", "observation.json"):
        t = temp_beside(tmp_path / name)
        t.write_text("")
        assert remove_stale_temps(tmp_path) == [t]
