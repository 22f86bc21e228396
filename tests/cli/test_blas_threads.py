"""``allot`` runs numpy on one OpenBLAS thread unless the user chose a number
(``cli.main.one_blas_thread``): OpenBLAS otherwise starts a spinning thread per core at import,
CPU the run pays for no result."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# a command that runs to its end, then numpy as the simulator would load it, then the process's
# threads and the setting it saw
_PROBE = """
import os, sys
from allotment.cli.main import main
try:
    main(["schema", "budget"])
except SystemExit:
    pass
import numpy
numpy.lexsort((numpy.arange(3.0),))
sys.stderr.write(f"{len(os.listdir('/proc/self/task'))} {os.environ.get('OPENBLAS_NUM_THREADS')}\\n")
"""


def _probe(**env: str) -> tuple[int, str]:
    base = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    threads, setting = done.stderr.split()[-2:]
    return int(threads), setting


def test_a_command_loads_numpy_with_one_blas_thread() -> None:
    threads, setting = _probe()
    assert setting == "1"
    if (os.cpu_count() or 1) > 1:  # one core: OpenBLAS starts no helper thread either way
        assert threads == 1


def test_a_users_own_thread_count_is_kept() -> None:
    _, setting = _probe(OPENBLAS_NUM_THREADS="2")
    assert setting == "2"


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores to tell")
def test_the_probe_sees_openblas_threads_when_asked_for_them() -> None:
    """The probe can fail: with two threads asked for, it counts more than one."""
    threads, _ = _probe(OPENBLAS_NUM_THREADS="2")
    assert threads > 1
