"""One task of a Slurm job array: ``python -m allotment.plan.executors.task_main RUNDIR INDEX``.

Reads ``RUNDIR/in/INDEX.pkl`` (the function, its argument and the task's key, pickled by
``slurm.SlurmArray`` in a folder it made for this run only), runs it, and writes the result to
``RUNDIR/out/<key>.json`` atomically (a temporary file in the same folder, renamed), so a
reader sees a whole result or none.  A task that fails writes one line to ``RUNDIR/err/INDEX``
and exits 1: the submitter reports that line, never a traceback (the traceback goes to the
task's log in ``RUNDIR/log/``)."""

from __future__ import annotations

import json
import pickle
import sys
import traceback
from pathlib import Path

from allotment.atomic_file import write_text


def result_text(key: str, result: object) -> str:
    """What an output file holds: the key it answers and the result, canonical JSON."""
    return json.dumps({"key": key, "result": result}, sort_keys=True, allow_nan=False)


def main(argv: list[str]) -> int:
    rundir, index = Path(argv[0]), argv[1]
    try:
        with open(rundir / "in" / f"{index}.pkl", "rb") as f:
            fn, arg, key = pickle.load(f)
        write_text(rundir / "out" / f"{key}.json", result_text(key, fn(arg)))
    except Exception as exc:  # a task's failure is reported by the submitter, as one line
        traceback.print_exc()
        line = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        write_text(rundir / "err" / index, line + "\n")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover - run inside a Slurm job
    sys.exit(main(sys.argv[1:]))
