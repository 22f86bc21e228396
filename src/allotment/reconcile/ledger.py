"""The usage ledger: allocated GPU-hours per account and time bucket, as observed, in SQLite.

Why a ledger: the scheduling core ranks accounts by their usage over a sliding window (7 days by
default); a reconciler that restarts must not forget that week.  Each row is keyed by
(job, run start, bucket) and only ever grows to the largest value seen (``MAX`` on conflict), so
recording the same observation twice, or replaying a tick after a crash, changes nothing.
WAL mode lets ``allot status`` read while the reconciler writes; every tick's rows are one
transaction, so a crash loses at most that tick, which the next tick observes again.

Usage is in reference GPU-hours: GPUs x hours x the billing weight of the node's GPU type.
Unallocated work (minimum runtime 0) is never recorded: it is free by contract.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from allotment.core.usage import seconds_in_window
from allotment.reconcile.state_errors import StateFileError, ledger_error

BUCKET_S = 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    job TEXT NOT NULL,
    run_start INTEGER NOT NULL,
    bucket INTEGER NOT NULL,
    account TEXT NOT NULL,
    gpu_hours REAL NOT NULL,
    PRIMARY KEY (job, run_start, bucket)
);
CREATE INDEX IF NOT EXISTS usage_bucket ON usage (bucket);
"""


@dataclass(frozen=True, slots=True)
class RunObs:
    """One allocated run seen at ``seen``: ``weight`` reference GPU-hours per GPU-hour."""

    job: str
    account: str
    start: float
    seen: float
    gpus: int
    weight: float = 1.0


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            self.db.execute("SELECT job, run_start, bucket, account, gpu_hours FROM usage LIMIT 1")
            check = self.db.execute("PRAGMA quick_check").fetchone()[0]  # once, at start
        except sqlite3.DatabaseError as exc:
            raise ledger_error(exc, path) from None
        if check != "ok":
            raise StateFileError(f"{path}: not a usage ledger (malformed: {check})")

    def close(self) -> None:
        self.db.close()

    def record(self, runs: Iterable[RunObs]) -> int:
        """Add what ``runs`` used from their start up to when they were seen; returns the number
        of (job, bucket) rows written.  One transaction."""
        rows = [row for r in runs for row in _rows(r)]
        with _transaction(self.db):
            self.db.executemany(
                "INSERT INTO usage (job, run_start, bucket, account, gpu_hours) VALUES (?,?,?,?,?)"
                " ON CONFLICT (job, run_start, bucket)"
                " DO UPDATE SET gpu_hours = MAX(gpu_hours, excluded.gpu_hours)",
                rows,
            )
        return len(rows)

    def usage(self, now: float, window_s: float) -> dict[str, float]:
        """Reference GPU-hours per account over the window ending at ``now`` (the one window
        rule, ``core.usage.seconds_in_window``); the bucket cut by the window's old edge
        counts pro rata, so usage slides out of the window smoothly."""
        first = math.floor((now - window_s) / BUCKET_S) * BUCKET_S
        out: dict[str, float] = {}
        cur = self.db.execute(
            "SELECT account, bucket, SUM(gpu_hours) FROM usage WHERE bucket >= ? AND bucket <= ?"
            " GROUP BY account, bucket ORDER BY account, bucket",
            (first, now),
        )
        for account, bucket, hours in cur:
            # a bucket's hours are spread evenly over the part of it that has happened
            hi = min(bucket + BUCKET_S, now)
            if hi <= bucket:
                continue
            inside = seconds_in_window(bucket, hi, now, window_s) / (hi - bucket)
            if inside > 0:
                out[account] = out.get(account, 0.0) + hours * inside
        return out

    def rows(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM usage").fetchone()[0])

    def prune(self, before: float) -> int:
        """Forget buckets wholly older than ``before`` (older than any window still asked for)."""
        with _transaction(self.db):
            cur = self.db.execute("DELETE FROM usage WHERE bucket + ? <= ?", (BUCKET_S, before))
        return cur.rowcount


def _rows(r: RunObs) -> list[tuple[str, int, int, str, float]]:
    out = []
    start, end = r.start, max(r.start, r.seen)
    b = math.floor(start / BUCKET_S) * BUCKET_S
    while b < end:
        lo, hi = max(start, b), min(end, b + BUCKET_S)
        if hi > lo:
            hours = r.gpus * (hi - lo) / 3600.0 * r.weight
            out.append((r.job, int(r.start), int(b), r.account, hours))
        b += BUCKET_S
    return out


class _transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
