"""A function run in a forked child (``plan.forked``): its result or its exception comes back
as if it had run here, its writes stay its own, and a child that dies says so."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import pytest

from allotment.plan import forked

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="needs os.fork, one thread")


def test_the_result_comes_back_from_another_process() -> None:
    child = forked.start(lambda: {"pid": os.getpid(), "x": [0.1, 1e-300, float(2**53 + 1)]})
    got = child.result()
    assert got["pid"] != os.getpid()
    assert got["x"] == [0.1, 1e-300, float(2**53 + 1)]  # floats exactly, not via text


def test_a_large_result_is_read_whole() -> None:
    """Bigger than a pipe's buffer: the child blocks on the pipe until the parent reads."""
    big = "x" * (1 << 20)
    assert forked.start(lambda: big).result() == big


def test_the_childs_writes_stay_in_the_child() -> None:
    state = {"jobs": [1, 2, 3]}

    def change() -> int:
        state["jobs"].append(4)
        return len(state["jobs"])

    assert forked.start(change).result() == 4
    assert state == {"jobs": [1, 2, 3]}


def test_an_exception_in_the_child_is_raised_again_here() -> None:
    def fail() -> None:
        raise ValueError("seed 3 ran out of jobs")

    child = forked.start(fail)
    with pytest.raises(ValueError, match="seed 3 ran out of jobs"):
        child.result()


def test_a_result_that_does_not_pickle_is_an_error_not_a_hang() -> None:
    child = forked.start(lambda: threading.Lock())
    with pytest.raises(ChildProcessError, match="TypeError"):
        child.result()


def test_a_child_killed_before_it_answers_is_an_error() -> None:
    def die() -> Any:
        os.kill(os.getpid(), signal.SIGKILL)

    child = forked.start(die)
    with pytest.raises(ChildProcessError, match="without a result"):
        child.result()


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not forked.can_fork()
    finally:
        stop.set()
        t.join()
    assert forked.can_fork()


def test_an_abandoned_child_is_stopped_and_reaped() -> None:
    child = forked.start(lambda: signal.pause())
    child.abandon()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # no such child any more: reaped, not a zombie
