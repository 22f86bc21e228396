"""A Slurm job array as executor: every task one array element, on the cluster being planned.

1. Each task's input is pickled to ``dir/run-<digest>/in/<i>.pkl``; ``dir`` must be a folder
   every node sees (a shared file system), and the run's sub-folder is named by the digest of its
   tasks' keys, so an interrupted run submitted again finds the results already written.
2. ONE ``sbatch --array=0-N`` whose elements each run ``python -m
   allotment.plan.executors.task_main`` with this very interpreter (``sys.executable``: the same
   virtual environment, which the nodes must see too), writing ``out/<key>.json`` atomically.
3. The queue is polled (``squeue``) until the array has left it, results yielded as they
   appear; a task that failed (``err/<i>``) cancels the array at once.
4. A failure is one line (``BackendError``, exit 3): which task, what it said or how Slurm ended
   it (``sacct``), and where its log is.  Past ``timeout_s`` the array is cancelled.

The folder is removed once every result is read; on failure it stays, for its logs.  Inputs are
pickles: the folder is made readable by this user only (0700), and only this run reads them."""

from __future__ import annotations

import hashlib
import os
import pickle
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.errors import BackendError
from allotment.plan.executors.protocol import ExecTask
from allotment.strict_json import loads_finite

DEFAULT_TIMEOUT_S = 6 * 3600.0
_ACTIVE = "PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED,RESIZING"


@dataclass(frozen=True, slots=True)
class SlurmArray:
    folder: Path  # shared between this host and the compute nodes
    sbatch_args: tuple[str, ...] = ()  # e.g. ("--partition=cpu", "--time=60")
    timeout_s: float = DEFAULT_TIMEOUT_S
    poll_s: float = 1.0
    python: str = sys.executable
    env: dict[str, str] | None = None  # the Slurm commands' environment (default: this one's)

    @property
    def parallelism(self) -> int:
        return 1000  # every task its own array element (Slurm's default MaxArraySize is 1001)

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[ExecTask]) -> Iterator[tuple[int, Any]]:
        if not tasks:
            return
        digest = hashlib.sha256("\n".join(t.key for t in tasks).encode()).hexdigest()[:16]
        rundir = Path(os.path.abspath(self.folder)) / f"run-{digest}"
        for sub in ("in", "out", "err", "log"):
            (rundir / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        rundir.chmod(0o700)
        # 1. results already there (an interrupted run of the same tasks) are not run again
        todo: list[int] = []
        for i, t in enumerate(tasks):
            hit = _read(rundir, t.key)
            if hit is not None:
                yield i, hit[0]
            else:
                todo.append(i)
        if todo:
            yield from self._array(fn, tasks, todo, rundir)
        shutil.rmtree(rundir, ignore_errors=True)

    def _array(
        self, fn: Callable[[Any], Any], tasks: Sequence[ExecTask], todo: list[int], rundir: Path
    ) -> Iterator[tuple[int, Any]]:
        for slot, i in enumerate(todo):
            (rundir / "err" / str(slot)).unlink(missing_ok=True)
            with open(rundir / "in" / f"{slot}.pkl", "wb") as f:
                pickle.dump((fn, tasks[i].arg, tasks[i].key), f, protocol=pickle.HIGHEST_PROTOCOL)
        script = rundir / "task.sh"
        script.write_text(
            "#!/bin/sh\n"
            f"exec {shlex.quote(self.python)} -m allotment.plan.executors.task_main "
            f'{shlex.quote(str(rundir))} "$SLURM_ARRAY_TASK_ID"\n'
        )
        # 2. one array for every task left
        argv = ["sbatch", "--parsable", f"--array=0-{len(todo) - 1}", "--job-name=allot-sim",
                f"--output={rundir / 'log' / '%a.log'}", f"--chdir={os.getcwd()}",
                *self.sbatch_args, str(script)]
        job = self._sh(argv).strip().split(";")[0]
        try:
            yield from self._wait(job, tasks, todo, rundir)
        except BaseException:  # an error, Ctrl-C, a caller that stops reading: no orphan array
            self._cancel(job)
            raise

    def _wait(
        self, job: str, tasks: Sequence[ExecTask], todo: list[int], rundir: Path
    ) -> Iterator[tuple[int, Any]]:
        # 3. poll until the array has left the queue, yielding results as they appear
        deadline = time.monotonic() + self.timeout_s
        left = dict(enumerate(todo))
        while True:
            for slot, i in list(left.items()):
                hit = _read(rundir, tasks[i].key)
                if hit is not None:
                    del left[slot]
                    yield i, hit[0]
            if not left:
                return
            failed = [s for s in sorted(left) if (rundir / "err" / str(s)).exists()]
            if failed:
                self._cancel(job)
                raise BackendError(self._failure(job, rundir, tasks, left, failed))
            if not self._queued(job):
                break
            if time.monotonic() > deadline:
                self._cancel(job)
                raise BackendError(
                    f"slurm array job {job}: {len(left)} of {len(todo)} tasks not done after "
                    f"{self.timeout_s:g} s; cancelled (logs: {rundir / 'log'})"
                )
            time.sleep(self.poll_s)
        # 4. the array has left the queue: a last look for results written as it ended
        for slot, i in list(left.items()):
            hit = _read(rundir, tasks[i].key)
            if hit is not None:
                del left[slot]
                yield i, hit[0]
        if left:
            failed = [s for s in sorted(left) if (rundir / "err" / str(s)).exists()] or sorted(left)
            raise BackendError(self._failure(job, rundir, tasks, left, failed))

    def _failure(
        self, job: str, rundir: Path, tasks: Sequence[ExecTask], left: dict[int, int], failed: list[int]
    ) -> str:
        slot = failed[0]
        err = rundir / "err" / str(slot)
        if err.exists():
            why = err.read_text(errors="replace").strip()
        else:
            why = f"ended {self._state(job, slot)} without a result"
        more = f" ({len(failed)} tasks failed)" if len(failed) > 1 else ""
        return (f"slurm array job {job}: task {slot} ({tasks[left[slot]].label}) {why}{more}; "
                f"log: {rundir / 'log' / f'{slot}.log'}")

    def _queued(self, job: str) -> bool:
        proc = self._proc(["squeue", "-h", "-j", job, "-t", _ACTIVE, "-o", "%i"])
        if proc.returncode != 0:  # "Invalid job id": gone from the controller already
            return False
        return bool(proc.stdout.strip())

    def _state(self, job: str, slot: int) -> str:
        """How Slurm ended the task, from accounting, which trails the queue by a few seconds."""
        deadline = time.monotonic() + 15.0
        while True:
            proc = self._proc(["sacct", "-n", "-P", "-X", "-j", f"{job}_{slot}", "-o", "State,ExitCode"])
            line = proc.stdout.strip().splitlines()[:1] if proc.returncode == 0 else []
            if line and line[0].split("|")[0] not in ("PENDING", "RUNNING", "COMPLETING"):
                return line[0].replace("|", " exit ")
            if time.monotonic() > deadline:
                return line[0].replace("|", " exit ") if line else "(state unknown: no accounting)"
            time.sleep(self.poll_s)

    def _cancel(self, job: str) -> None:
        self._proc(["scancel", job])

    def _sh(self, argv: list[str]) -> str:
        proc = self._proc(argv)
        if proc.returncode != 0:
            msg = " ".join((proc.stderr or proc.stdout).split()) or f"exit {proc.returncode}"
            raise BackendError(f"{argv[0]} failed: {msg}")
        return proc.stdout

    def _proc(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                                  stdin=subprocess.DEVNULL, env=self.env)
        except FileNotFoundError:
            raise BackendError(f"{argv[0]}: not found; is this a Slurm login node?") from None
        except subprocess.TimeoutExpired:
            raise BackendError(f"{argv[0]}: no answer within 60 s") from None


def _read(rundir: Path, key: str) -> tuple[Any] | None:
    """The result written for ``key``, in a one-tuple (a result may be None); None if absent or
    not a whole output for this key."""
    try:
        entry = loads_finite((rundir / "out" / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or "result" not in entry:
        return None
    return (entry["result"],)

