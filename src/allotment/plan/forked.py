"""A function run in a forked child process, its result read back: how a plan unit runs its head
side next to its base side from the warm-up they share (``impact_units.run_unit``).

Why fork.  After the base's warm-up the two sides are independent.  Continuing both in one
process needs a copy of the paused run (``sim.switch.switched``: a deep copy, 0.36 s CPU a seed
on a quiet core and up to 1.5 s under load, docs/benchmarks.md, "Stop 49"), and runs the two
measured parts one after the other.  A forked child gets the paused run for the price of the
pages either process writes afterwards (copy-on-write), and runs its side while the parent runs
the other: a unit's last two thirds use two processes, so on the local pool's shared cores the
plan's last units end sooner (no core idles while one process finishes both sides alone).

The child runs ``fn``, sends back the pickled ``(True, result)`` or ``(False, exception)``
through a pipe and leaves through ``os._exit``, so it never returns into its caller's loop (a
pool worker's), runs no exit handlers and flushes none of the parent's buffered output.  An
exception in the child is raised again by :meth:`Child.result`, as if ``fn`` had run here.

A fork is made only from a single-threaded process (:func:`can_fork`): the child of a threaded
process holds copies of locks that other threads may have held at the fork.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Whether :func:`start` may fork here: a POSIX ``fork`` and no other thread running."""
    return hasattr(os, "fork") and threading.active_count() == 1


@dataclass(frozen=True, slots=True)
class Child(Generic[T]):
    """A forked child running one function; :meth:`result` waits for it (call it once)."""

    pid: int
    fd: int  # the read end of the pipe the child writes its outcome to

    def result(self) -> T:
        chunks = []
        with os.fdopen(self.fd, "rb") as f:
            while chunk := f.read(1 << 16):
                chunks.append(chunk)
        _, status = os.waitpid(self.pid, 0)
        data = b"".join(chunks)
        if not data:  # killed (the OOM killer, a signal) before it wrote a word
            raise ChildProcessError(f"forked process {self.pid} ended without a result "
                                    f"(wait status {status})")
        ok, value = pickle.loads(data)
        if not ok:
            raise value
        out: T = value
        return out

    def abandon(self) -> None:
        """Stop the child and reap it, its result unread: its caller failed meanwhile."""
        os.kill(self.pid, signal.SIGKILL)
        os.close(self.fd)
        os.waitpid(self.pid, 0)


def start(fn: Callable[[], T]) -> Child[T]:
    """Fork a child that runs ``fn()``; the caller goes on at once (``can_fork`` first)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(read_end)
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as exc:  # handed to the parent to raise
                outcome = (False, exc)
            try:
                data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # a value that does not pickle: said in words
                what = outcome[1] if not outcome[0] else exc
                data = pickle.dumps((False, ChildProcessError(f"{type(what).__name__}: {what}")))
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return Child(pid, read_end)
