"""``--executor local|slurm`` and its options, shared by ``allot plan`` and ``allot sweep``."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from allotment.plan.executors.protocol import Executor

DEFAULT_FOLDER = Path(".allot-executor")


def add_executor_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="where the simulations run: local (this machine's processes, --workers of them) or "
        "slurm (one job array, one task per simulation unit; docs/plan.md, \"Executors\") "
        "(default: local)",
    )
    p.add_argument(
        "--executor-dir",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help="slurm: a folder the compute nodes see, for each task's input, output and log; "
        "removed once every result is read (default: ./.allot-executor)",
    )
    p.add_argument(
        "--sbatch-args",
        default="",
        metavar="'ARGS'",
        help="slurm: more sbatch options for the array, e.g. '--partition=cpu --time=60'",
    )
    p.add_argument(
        "--executor-timeout",
        type=float,
        default=None,
        metavar="S",
        help="slurm: cancel the array and fail after S seconds (default: 6 hours)",
    )


def executor_of(args: argparse.Namespace, workers: int) -> Executor:
    from allotment.plan.executors.local import LocalPool

    if args.executor == "local":
        return LocalPool(workers)
    from allotment.errors import UsageError
    from allotment.plan.executors.slurm import DEFAULT_TIMEOUT_S, SlurmArray

    try:
        extra = tuple(shlex.split(args.sbatch_args))
    except ValueError as exc:
        raise UsageError(f"--sbatch-args {args.sbatch_args!r}: {exc}") from None
    timeout = args.executor_timeout if args.executor_timeout is not None else DEFAULT_TIMEOUT_S
    if not timeout > 0:
        raise UsageError(f"--executor-timeout {timeout:g}: expected a number of seconds above 0")
    return SlurmArray(args.executor_dir, sbatch_args=extra, timeout_s=timeout)
