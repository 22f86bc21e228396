"""The command runner with real processes: timeouts, bounded retries of reads, single writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.backends.slurm.runner import Runner
from allotment.errors import BackendError


def _runner(**kw: object) -> tuple[Runner, list[float]]:
    slept: list[float] = []
    return Runner(sleep=slept.append, **kw), slept  # type: ignore[arg-type]


def test_a_hanging_command_times_out_with_a_clear_message() -> None:
    r, _ = _runner(timeout_s=0.2, retries=0)
    with pytest.raises(BackendError, match=r"sleep 5 timed out after 0.2s"):
        r.read(["sleep", "5"])


def test_reads_are_retried_with_exponential_backoff_then_give_up(tmp_path: Path) -> None:
    count = tmp_path / "count"
    r, slept = _runner(retries=3, backoff_s=0.5)
    script = f"echo x >> {count}; echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1"
    with pytest.raises(BackendError, match="Unable to contact slurm controller"):
        r.read(["sh", "-c", script])
    assert len(count.read_text().splitlines()) == 4
    assert slept == [0.5, 1.0, 2.0]


def test_a_read_that_recovers_returns_its_output(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    r, slept = _runner(retries=2)
    script = f"if [ -e {flag} ]; then echo ok; else touch {flag}; exit 1; fi"
    assert r.read(["sh", "-c", script]) == "ok\n"
    assert len(slept) == 1


def test_a_write_runs_exactly_once_even_when_it_fails(tmp_path: Path) -> None:
    count = tmp_path / "count"
    r, slept = _runner(retries=3)
    with pytest.raises(BackendError):
        r.write(["sh", "-c", f"echo x >> {count}; exit 1"])
    assert count.read_text() == "x\n" and slept == []


def test_a_missing_binary_is_a_backend_error() -> None:
    r, _ = _runner(retries=0)
    with pytest.raises(BackendError, match="could not run"):
        r.read(["/nonexistent/squeue", "--json"])
