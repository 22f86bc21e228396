"""Reading the live reconciler's state dir (``allot reconcile --state DIR``), read-only.

What is there: ``status.json`` (``reconcile.status``), ``audit.jsonl`` (``reconcile.audit``),
``ledger.sqlite`` (``reconcile.ledger``), the source mirror ``source.git`` (the applied config is
read from git objects at ``last_applied_revision``), and, with the simulated backend, ``sim.json``
(its cluster).  The last observation is read from ``observation.json`` when the reconciler writes
one (an ``Observation`` as ``dataclasses.asdict``), else from ``sim.json``; with neither the queue
and node panels say so.

Window usage comes from the ledger's own rule (``Ledger.usage``); the per-bucket read for
``allot usage`` and the charts is here (the ledger has no read of its buckets), on a read-only
SQLite connection so a viewer can never create or change a ledger."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.backends.protocol import JobObs, NodeObs, Observation
from allotment.compile.model import CompiledConfig
from allotment.errors import UsageError
from allotment.reconcile.audit import AuditLog
from allotment.reconcile.ledger import Ledger
from allotment.reconcile.status import STATUS_FILE, Status, load_status

OBSERVATION_FILE = "observation.json"
SIM_FILE = "sim.json"
LEDGER_FILE = "ledger.sqlite"
AUDIT_FILE = "audit.jsonl"


@dataclass(frozen=True, slots=True)
class Bucket:
    account: str
    job: str
    bucket: int  # Unix seconds, start of the hour
    gpu_hours: float


@dataclass(frozen=True, slots=True)
class LiveState:
    path: Path
    status: Status
    audit: tuple[dict[str, Any], ...]
    observation: Observation | None

    @property
    def now(self) -> float:
        return self.observation.at if self.observation is not None else self.status.last_tick


def read_state(path: Path) -> LiveState:
    if not (path / STATUS_FILE).exists():
        raise UsageError(f"--state {path}: no {STATUS_FILE} (has `allot reconcile --state {path}` run?)")
    status = load_status(path)
    audit = tuple(AuditLog(path / AUDIT_FILE).read())
    return LiveState(path, status, audit, _observation(path))


def _observation(path: Path) -> Observation | None:
    obs = path / OBSERVATION_FILE
    if obs.exists():
        try:
            raw = json.loads(obs.read_text(encoding="utf-8"))
            return Observation(
                float(raw["at"]),
                tuple(NodeObs(**n) for n in raw["nodes"]),
                tuple(JobObs(**{**j, "nodes": tuple(j.get("nodes", ()))}) for j in raw["jobs"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{obs}: not an observation ({exc})") from exc
    sim = path / SIM_FILE
    if sim.exists():
        from allotment.backends.simulated import SimulatedBackend

        return SimulatedBackend.load(sim).observe()
    return None


def window_usage(state: LiveState, window_s: float) -> dict[str, float]:
    """GPU-hours per account over the window ending now, by the ledger's own rule."""
    if not (state.path / LEDGER_FILE).exists():
        return {}
    ledger = Ledger(state.path / LEDGER_FILE)
    try:
        return ledger.usage(state.now, window_s)
    finally:
        ledger.close()


def buckets(state: LiveState, since: float) -> list[Bucket]:
    """Every ledger row of an hour starting at or after ``since``, in time order."""
    path = state.path / LEDGER_FILE
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute(
            "SELECT account, job, bucket, SUM(gpu_hours) FROM usage WHERE bucket >= ?"
            " GROUP BY account, job, bucket ORDER BY bucket, account, job",
            (int(since // 3600 * 3600),),
        ).fetchall()
    finally:
        db.close()
    return [Bucket(str(a), str(j), int(b), float(h)) for a, j, b, h in rows]


def applied_config(state: LiveState, at: dt.date | None = None) -> CompiledConfig:
    """The config the reconciler last applied, compiled from its own source mirror."""
    from allotment.compile.compiler import compile_config
    from allotment.config.loader import load_config
    from allotment.reconcile.source import DirSource, GitSource

    st = state.status
    sha = st.last_applied_revision
    if sha is None:
        raise UsageError(f"--state {state.path}: the reconciler has applied no revision yet")
    src: GitSource | DirSource
    if sha == "dir":
        src = DirSource(Path(st.source))
    else:
        import git

        src = GitSource(st.source, "main", state.path)
        try:
            # open the mirror as it is: GitSource would fetch first (a viewer must not write);
            # GitSource has no read-only open, so its repo is set here
            src._repo = git.Repo(src.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise UsageError(f"--state {state.path}: no source mirror ({exc})") from exc
    day = at or dt.datetime.fromtimestamp(state.now, dt.UTC).date()
    try:
        return compile_config(load_config(src.files(sha)), day, None if sha == "dir" else sha)
    finally:
        src.close()


def pinned_order(state: LiveState) -> dict[str, dict[str, Any]]:
    """job -> the newest applied ``set_priority`` audit line (the core's order and its reason)."""
    out: dict[str, dict[str, Any]] = {}
    for a in state.audit:
        if a.get("action") == "set_priority" and a.get("result") == "applied" and not a.get("dry_run"):
            out[str(a.get("target"))] = a
    return out
