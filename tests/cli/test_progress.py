"""The progress bar of the long commands: drawn on stderr when it is a terminal, never in a
pipe, in CI or when stdout carries ``--json -``; checked with real processes on a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from allotment.cli.progress import Progress, wanted
from tests.conftest import REPO_ROOT

SIMULATE = [sys.executable, "-m", "allotment.cli.main", "simulate", "--repo", str(REPO_ROOT),
            "--scenario", "ai2", "--days", "0.05"]


def _run_on_pty(argv: list[str], env: dict[str, str]) -> tuple[int, str, bytes]:
    """Run with stderr on a pseudo-terminal (stdout a pipe); its stdout and what the terminal got."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    proc.stdout.close()
    os.close(master)
    return proc.wait(60), out, seen


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TERM")}
    return env | {"TERM": "xterm-256color", "COLUMNS": "100"} | extra


def test_simulate_draws_a_progress_bar_on_a_terminal_only() -> None:
    code, out, tty = _run_on_pty(SIMULATE, _env())
    assert code == 0 and "policy budgets on" in out
    assert b"simulating" in tty  # the bar, on stderr, while the run lasted
    assert b"simulating" not in out.encode()


@pytest.mark.parametrize("why", ["CI", "json-to-stdout"])
def test_simulate_is_quiet_in_ci_and_with_json_to_stdout(why: str) -> None:
    argv = [*SIMULATE, "--json", "-"] if why == "json-to-stdout" else SIMULATE
    env = _env(CI="true") if why == "CI" else _env()
    code, _, tty = _run_on_pty(argv, env)
    assert code == 0 and b"simulating" not in tty


def test_a_pipe_gets_no_bar(tmp_path: Path) -> None:
    done = subprocess.run(SIMULATE, capture_output=True, env=_env(), timeout=120, check=False)
    assert done.returncode == 0 and b"simulating" not in done.stderr


def test_wanted_only_for_a_terminal_outside_ci() -> None:
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=False) as term:
            assert wanted(stream=term, env={})
            assert not wanted(stream=term, env={"CI": "1"})
            assert not wanted(stream=term, env={"TERM": "dumb"})
            assert not wanted(stream=term, env={}, machine_stdout=True)
        assert not wanted(stream=io.StringIO(), env={})
    finally:
        os.close(master)
        os.close(slave)
    with Progress("x", enabled=False) as p:  # disabled: every call is a no-op
        p.update(1, 2)
        p.phase("y")
        p.runs("z")(2, 2)
