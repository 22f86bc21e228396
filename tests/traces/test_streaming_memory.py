"""Imports stream: memory follows the sort chunk and a few bytes a job, not the file size."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from allotment.traces.sorting import DEFAULT_CHUNK


def _write_swf(path: Path, jobs: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    t = 0
    with path.open("w") as fh:
        fh.write("; Version: 2.2\n; MaxProcs: 1024\n")
        for i in range(1, jobs + 1):
            t += rng.randrange(0, 30)
            procs = rng.choice((1, 2, 4, 8, 16, 32, 64))
            user = rng.randrange(500)  # each user in one group, as in real logs
            fh.write(
                f"{i:8d} {t:10d} {-1:6d} {rng.randrange(1, 90000):8d} {procs:5d} {-1:6d} {-1:6d} "
                f"{procs:5d} {-1:6d} {-1:6d} {1:2d} {user:5d} {user % 20:4d} "
                f"{rng.randrange(900):5d} {rng.randrange(3):3d} {-1:3d} {-1:3d} {-1:3d}\n"
            )
    return path.stat().st_size


_CHILD = """
import resource, sys
from allotment.traces.fill_rules import rules_for
from allotment.traces.importers import SwfImporter
from allotment.traces.pipeline import import_trace
import_trace(SwfImporter(), sys.argv[1], sys.argv[2], fill=rules_for("swf"), sort_chunk=int(sys.argv[3]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _child_rss(src: Path, out: Path, chunk: int = DEFAULT_CHUNK) -> int:
    """Peak resident memory of a fresh interpreter importing ``src`` (no tracing overhead)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(src), str(out), str(chunk)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def test_memory_grows_far_less_than_the_file(tmp_path: Path) -> None:
    small, big = tmp_path / "small.swf", tmp_path / "big.swf"
    _write_swf(small, 10)
    size = _write_swf(big, 60_000)  # about 6.7 MB; a small sort chunk forces spilled runs
    assert size > 6_000_000
    base = _child_rss(small, tmp_path / "s.jsonl", chunk=2_000)  # interpreter and imports
    rss = _child_rss(big, tmp_path / "b.jsonl", chunk=2_000)
    assert rss - base < size / 2, f"grew {rss - base:,} bytes for a {size:,}-byte file"
    with (tmp_path / "b.jsonl").open() as fh:
        assert sum(1 for _ in fh) == 60_001  # header + every job


@pytest.mark.slow
def test_a_50_mb_swf_imports_in_much_less_than_50_mb(tmp_path: Path) -> None:
    small, big = tmp_path / "small.swf", tmp_path / "big.swf"
    _write_swf(small, 10)
    size = _write_swf(big, 460_000)  # about 50 MB, default sort chunk
    assert size > 50_000_000
    base = _child_rss(small, tmp_path / "s.jsonl")
    rss = _child_rss(big, tmp_path / "b.jsonl")
    assert rss - base < size / 2, f"grew {rss - base:,} bytes for a {size:,}-byte file"
