"""Issue 32, item 5: ``allot trace check`` streams: memory follows one line and the id index (a
few bytes a job), not the file (a 1M-job trace used 499 MB, 0.45 KB a job, read whole)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

_CHILD = """
import resource, sys
from allotment.cli.main import main
assert main(["trace", "check", sys.argv[1]]) == 0
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, file=sys.stderr)
"""


def _write(path: Path, jobs: int) -> None:
    rnd, t = random.Random(1), 0.0
    with path.open("w") as f:
        for i in range(jobs):
            t += rnd.random() * 3
            f.write(json.dumps({"id": f"j{i:07d}", "submit": round(t, 3), "account": f"t{i % 40}",
                                "gpus": rnd.choice([1, 2, 4, 8]), "work": rnd.randrange(60, 86400)}) + "\n")


def _rss(path: Path, tmp: Path) -> int:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in sys.path)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                          text=True, check=True, cwd=tmp, env=env)  # outside any config repo
    return int(done.stderr.strip().splitlines()[-1])


def test_trace_check_memory_grows_by_bytes_a_job_not_the_file(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _write(small, 1_000)
    _write(big, 150_000)
    grew = _rss(big, tmp_path) - _rss(small, tmp_path)
    assert grew / 149_000 < 120, f"{grew / 149_000:.0f} bytes a job"
