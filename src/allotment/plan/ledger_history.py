"""The reconciler's usage ledger as the plan's history: a snapshot of it, committed in the config
repository, turned into a canonical trace the plan replays (docs/plan.md, "Your own history").

Why a snapshot in the repository and not the live file: the plan runs in CI, away from the
reconciler's state dir, and must judge a pull request on a history the request cannot touch.
``plan_workload`` names the file and both are read from the **base** revision (``plan.impact``),
as for a trace export; the platform team refreshes the snapshot (``sqlite3 STATE/ledger.db
".backup history/ledger.db"``, a consistent copy while the reconciler writes in WAL mode).

What the ledger holds, and so what the replay has: per (job, run start, hour) the reference
GPU-hours the run used, allocated work only (``reconcile.ledger``, whose writer is the one owner
of the layout; ``tests/plan/test_ledger_history.py`` writes its ledgers through it).  From it:

* a run's rate (GPUs x billing weight) is the GPU-hours of an hour it ran whole, else of its
  first hour over the part of that hour after its start when it ran into the next; a run seen in
  one hour only is taken to run to that hour's end (the fewest GPUs that used what it used);
* GPUs = rate / the billing weight of the cluster's GPU type, rounded, at least 1;
* a job is submitted when its first run started (the ledger keeps no submission: queue waits of
  the history are not replayed) and its work is its GPU-hours over its rate (every run of a
  requeued job, summed);
* unallocated work is never in the ledger (free by contract), so none is replayed.

So a ledger replays who ran how much and when, not who waited: it is the weaker history; an
``sacct`` export (``allot trace import``) keeps submissions, sizes and unallocated work.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from allotment.compile.model import CompiledConfig
from allotment.core.jobs import JobSpec
from allotment.errors import TraceError
from allotment.traces.writer import sorted_items, write_trace

__all__ = ["SQLITE_MAGIC", "is_ledger", "ledger_to_trace"]

SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
_HOUR = 3600.0


def is_ledger(data: bytes) -> bool:
    """A committed file is read as a ledger snapshot when it is an SQLite database."""
    return data[: len(SQLITE_MAGIC)] == SQLITE_MAGIC


@dataclass(frozen=True, slots=True)
class LedgerRun:
    """One run of a job as the ledger has it: its start and its GPU-hours per hour bucket."""

    job: str
    account: str
    start: float
    hours: tuple[tuple[int, float], ...]  # (bucket start, reference GPU-hours), by bucket

    def rate(self) -> float:
        """Reference GPU-hours per hour of running (GPUs x billing weight)."""
        first_bucket, first_hours = self.hours[0]
        whole = [h for b, h in self.hours[1:-1]]
        if whole:
            return max(whole)
        # a run's first hour is cut by its start; when it ran on into the next hour, the first
        # hour ran from the start to the hour's end; a run seen in one hour only is taken so too
        ran = first_bucket + _HOUR - self.start
        return first_hours * _HOUR / ran if ran > 0 else first_hours

    def gpu_hours(self) -> float:
        return sum(h for _, h in self.hours)


def _runs(path: Path) -> Iterator[LedgerRun]:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT job, run_start, bucket, account, gpu_hours FROM usage"
                " ORDER BY job, run_start, bucket"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"{path.name}: not a usage ledger of allot reconcile: {exc}") from None
    key: tuple[str, int] | None = None
    account = ""
    hours: list[tuple[int, float]] = []
    for job, run_start, bucket, acct, h in rows:
        if (job, run_start) != key:
            if key is not None and hours:
                yield LedgerRun(key[0], account, float(key[1]), tuple(hours))
            key, account, hours = (job, run_start), acct, []
        if h > 0:
            hours.append((int(bucket), float(h)))
    if key is not None and hours:
        yield LedgerRun(key[0], account, float(key[1]), tuple(hours))


def cluster_weight(config: CompiledConfig, cluster: str,
                   where: Callable[[], str] = lambda: "policies/scheduler.yaml") -> float:
    """The billing weight of the cluster's GPUs: the ledger's GPU-hours are in reference hours
    (GPUs x hours x weight).  A cluster of GPU types with different weights cannot say how many
    GPUs a ledger's run held: refused at ``where()``, the setting's ``file:line:col``."""
    weights = {config.gpu_types[g.gpu_type].billing_weight
               for g in config.clusters[cluster].node_groups if g.gpu_type in config.gpu_types}
    if len(weights) != 1:
        raise TraceError(
            f"{where()}: plan_workload is a ledger, but cluster {cluster!r} has GPU "
            f"types of {len(weights)} billing weights: a ledger cannot say how many GPUs a run "
            "held; commit an sacct export (allot trace import) instead"
        )
    return weights.pop()


def ledger_to_trace(path: Path, weight: float, out: Path) -> int:
    """Write the canonical trace of the ledger snapshot at ``path`` (module docstring) to
    ``out``; returns the number of jobs.  Time 0 is the hour of the ledger's first run start."""
    by_job: dict[str, list[LedgerRun]] = {}
    for r in _runs(path):
        by_job.setdefault(r.job, []).append(r)
    if not by_job:
        raise TraceError(f"{path.name}: the ledger holds no usage to replay")
    t0 = math.floor(min(r.start for runs in by_job.values() for r in runs) / _HOUR) * _HOUR
    jobs = []
    for job, runs in sorted(by_job.items()):
        rate = max(r.rate() for r in runs)
        gpus = max(1, round(rate / weight))
        jobs.append(JobSpec(
            id=job,
            submit=min(r.start for r in runs) - t0,
            account=runs[0].account,
            gpus=gpus,
            work=max(1.0, round(sum(r.gpu_hours() for r in runs) / (gpus * weight) * _HOUR)),
        ))
    header = {"source": "ledger", "generator": "allot plan (plan/ledger_history.py)",
              "start": dt.datetime.fromtimestamp(t0, dt.UTC).isoformat()}
    write_trace(out, sorted_items(jobs, ()), header)
    return len(jobs)
