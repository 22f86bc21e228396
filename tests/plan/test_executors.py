"""The executors' parts that need no cluster: the array task's file protocol, resuming from
results already written, and a machine without Slurm (the array itself: tests/slurm/)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
from pathlib import Path

import pytest

from allotment.errors import BackendError
from allotment.plan.executors.local import SHARE, LocalPool, processes
from allotment.plan.executors.protocol import ExecTask
from allotment.plan.executors.slurm import SlurmArray
from allotment.plan.executors.task_main import main as task_main
from allotment.plan.executors.task_main import result_text

NO_SLURM = {"PATH": "/nonexistent"}


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _input(rundir: Path, index: int, arg: str, key: str) -> None:
    for sub in ("in", "out", "err"):
        (rundir / sub).mkdir(parents=True, exist_ok=True)
    (rundir / "in" / f"{index}.pkl").write_bytes(pickle.dumps((json.loads, arg, key)))


def test_an_array_task_writes_its_result_under_its_key_and_a_failure_as_one_line(
    tmp_path: Path,
) -> None:
    _input(tmp_path, 0, '{"b": [1, 2.5], "a": null}', _key("good"))
    _input(tmp_path, 1, "not json", _key("bad"))
    assert task_main([str(tmp_path), "0"]) == 0
    out = (tmp_path / "out" / f"{_key('good')}.json").read_text()
    assert json.loads(out) == {"key": _key("good"), "result": {"a": None, "b": [1, 2.5]}}
    assert task_main([str(tmp_path), "1"]) == 1
    assert (
        tmp_path / "err" / "1"
    ).read_text() == "JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"{_key('good')}.json"
    ]  # no temp left


def test_results_already_in_the_folder_are_read_and_nothing_is_submitted(tmp_path: Path) -> None:
    tasks = [ExecTask(_key(str(i)), f"[{i}]", f"task {i}") for i in range(3)]
    digest = hashlib.sha256("\n".join(t.key for t in tasks).encode()).hexdigest()[:16]
    (tmp_path / f"run-{digest}" / "out").mkdir(parents=True)
    for i, t in enumerate(tasks):
        (tmp_path / f"run-{digest}" / "out" / f"{t.key}.json").write_text(result_text(t.key, [i]))
    array = SlurmArray(tmp_path, env=NO_SLURM)  # sbatch would not be found
    assert sorted(array.run(json.loads, tasks)) == [(0, [0]), (1, [1]), (2, [2])]
    assert not any(tmp_path.iterdir())  # read back, then removed


def test_a_machine_without_slurm_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"^sbatch: not found; is this a Slurm login node\?$"):
        list(SlurmArray(tmp_path, env=NO_SLURM).run(json.loads, [ExecTask(_key("x"), "[1]", "x")]))


@pytest.mark.parametrize("workers", [1, 2])
def test_the_local_pool_yields_every_result_with_its_index(workers: int) -> None:
    tasks = [ExecTask(_key(str(i)), f"[{i}]", "") for i in range(4)]
    assert sorted(LocalPool(workers).run(json.loads, tasks)) == [(i, [i]) for i in range(4)]


_STARTED = None  # a barrier every task of the next pool waits at (inherited by forked workers)


def _meet(arg: str) -> int:
    assert _STARTED is not None
    _STARTED.wait(timeout=30)  # broken (an error) unless every task runs at once
    return os.getpid()


def test_the_local_pool_runs_a_plans_few_tasks_at_once_sharing_its_cores() -> None:
    """Four tasks on two cores: four processes at once, so none waits for another to end (a pool
    of two processes would idle a core behind the last odd task: docs/benchmarks.md, stop 41)."""
    global _STARTED
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the barrier reaches the workers by fork")
    _STARTED = multiprocessing.get_context("fork").Barrier(4)
    try:
        tasks = [ExecTask(_key(str(i)), str(i), "") for i in range(4)]
        pids = dict(LocalPool(2).run(_meet, tasks))
    finally:
        _STARTED = None
    assert sorted(pids) == [0, 1, 2, 3] and len(set(pids.values())) == 4
    assert processes(4, 2) == 4 and processes(100, 2) == 2 * SHARE
