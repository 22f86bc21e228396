"""What the reconciler remembers between ticks that neither the cluster nor the ledger keeps,
saved in the state dir (``memory.json``) so that a restart changes no decision.

The core reads four such facts (and the audit log, which boosts it has logged, ``boost_audit``): which job a requeued job was evicted for (anti-thrash), a
job's first submission (Slurm forgets it at a requeue), which running jobs the core started as
debug backfill that yields to a reservation, and the window usage frozen for the current
fair-share epoch (``reconcile.active.EpochUsage``); and one fact of its own, the notice each
session was given before it is stopped (``reconcile.grace``: a restart must not cut a grace short).  Held only in memory, a restart (a deploy,
a crash, a node reboot) made the core treat requeued jobs as fresh and read usage mid-epoch,
so the cluster parted from what the simulator predicts for the same state.  The file is
replaced atomically, and only when its text changes; a file that is not one the reconciler
wrote is refused in one line (``StateFileError``, exit 2: move it aside and the reconciler
starts with an empty memory, as a new state dir does).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from allotment.reconcile.active import EpochUsage
from allotment.reconcile.first_submit import FirstSubmissions
from allotment.reconcile.grace import Notice
from allotment.reconcile.job_memory import JobMemory
from allotment.reconcile.state_errors import StateDirError, StateFileError, write_atomic

MEMORY_FILE = "memory.json"


@dataclass(slots=True)
class Memory:
    """The reconciler's memory of jobs and of the epoch; ``text`` is what was last saved."""

    evicted_by: JobMemory[str] = field(default_factory=JobMemory)
    submitted: FirstSubmissions = field(default_factory=FirstSubmissions)
    yields: set[str] = field(default_factory=set)
    usage: EpochUsage = field(default_factory=EpochUsage)
    noticed: JobMemory[Notice] = field(default_factory=JobMemory)
    boosts: dict[str, str] = field(default_factory=dict)  # boost -> state last audited (boost_audit)
    text: str = ""


class _MemoryFile(BaseModel):
    """The file format, validated strictly: a hand-edited or corrupt file is refused whole,
    NaN and infinities too (they would compare false with every time and usage)."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
    version: Literal[1]
    evicted_by: dict[str, tuple[str, float]]  # job -> (the job it made room for, last seen)
    first_submit: dict[str, tuple[float, float]]  # job -> (first submission, last seen)
    yields: list[str]
    epoch: float | None
    epoch_usage: dict[str, float]
    # job -> (the run's start key, notice time, last seen); absent in files from before issue 29
    noticed: dict[str, tuple[str, float, float]] = {}
    boosts: dict[str, str] = {}  # absent in files written before boosts were audited


def memory_text(m: Memory) -> str:
    body: dict[str, Any] = {
        "version": 1,
        "evicted_by": {j: list(e) for j, e in sorted(m.evicted_by.entries().items())},
        "first_submit": {j: list(e) for j, e in sorted(m.submitted.memory.entries().items())},
        "yields": sorted(m.yields),
        "epoch": m.usage.epoch,
        "epoch_usage": dict(sorted(m.usage.usage.items())),
    }
    if m.noticed.entries():  # left out when empty: a file without sessions reads as before
        body["noticed"] = {j: [n.run, n.at, seen] for j, (n, seen) in sorted(m.noticed.entries().items())}
    if m.boosts:
        body["boosts"] = dict(sorted(m.boosts.items()))
    return json.dumps(body, indent=1) + "\n"


def read_memory(state_dir: Path) -> Memory:
    """The memory saved in ``state_dir`` (empty when there is none yet)."""
    path = state_dir / MEMORY_FILE
    try:
        if not path.exists():
            return Memory()
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StateDirError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        f = _MemoryFile.model_validate_json(text)
    except ValidationError as exc:
        why = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise StateFileError(
            f"{path}: not a reconciler memory file ({why}); move it aside to start afresh"
        ) from None
    return Memory(
        evicted_by=JobMemory(f.evicted_by),
        submitted=FirstSubmissions(JobMemory(f.first_submit)),
        yields=set(f.yields),
        usage=EpochUsage(f.epoch, dict(f.epoch_usage)),
        noticed=JobMemory({j: (Notice(run, at), seen) for j, (run, at, seen) in f.noticed.items()}),
        boosts=dict(f.boosts),
        text=text,
    )


def save_memory(state_dir: Path, m: Memory) -> None:
    """Replace the file when what it would say changed; StateDirError when the dir refuses."""
    text = memory_text(m)
    if text != m.text:
        write_atomic(state_dir / MEMORY_FILE, text)
        m.text = text
