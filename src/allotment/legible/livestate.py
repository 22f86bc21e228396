"""Reading the live reconciler's state dir (``allot reconcile --state DIR``), read-only.

What is there: ``status.json`` (``reconcile.status``), ``audit.jsonl`` (``reconcile.audit``),
``ledger.sqlite`` (``reconcile.ledger``), the source mirror ``source.git`` (the applied config is
read from git objects at ``last_applied_revision``), and, with the simulated backend, ``sim.json``
(its cluster).  The last observation is read from ``observation.json`` when the reconciler writes
one (an ``Observation`` as ``dataclasses.asdict``), else from ``sim.json``; with neither the queue
and node panels say so.

Window usage comes from the ledger's own rule (``Ledger.usage``); the per-bucket read for
``allot usage`` and the charts is here (the ledger has no read of its buckets), on a read-only
SQLite connection so a viewer can never create or change a ledger.

The audit log holds each action twice, as intent before the backend is asked and as outcome
after (``reconcile.audit``); the views read the outcomes (``LiveState.actions``: what happened),
and an intent with no outcome yet as ``"in flight"``.  The file is read as it is: ``AuditLog``
repairs the log when opened, which only the reconciler may do (a viewer next to a running
reconciler would otherwise close the batch it is applying as "interrupted").

Times: ``LiveState.now`` is the backend's clock at the last observation, the one the ledger and
the contract are kept on.  Whether the reconciler is Ready is judged against the reader's own
clock (``conditions_at``), as ``allot status --reconciler`` does: a last tick older than
``reconcile.status.STALE_TICKS`` intervals is not Ready."""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.backends.protocol import Observation
from allotment.compile.model import CompiledConfig
from allotment.errors import BackendError, UsageError
from allotment.reconcile.audit import read_lines
from allotment.reconcile.ledger import Ledger
from allotment.reconcile.observation_file import load_observation
from allotment.reconcile.status import STATUS_FILE, Condition, Status, conditions, read_status

SIM_FILE = "sim.json"
LEDGER_FILE = "ledger.sqlite"
AUDIT_FILE = "audit.jsonl"
IN_FLIGHT = "in flight"  # the result shown for an intent whose outcome is not written yet


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
    actions: tuple[dict[str, Any], ...]  # audit outcomes (and intents in flight), oldest first
    observation: Observation | None

    @property
    def now(self) -> float:
        """The backend's clock at the last observation (the ledger's and the contract's)."""
        obs, st = self.observation, self.status
        if obs is not None:
            return obs.backend_now if obs.backend_now is not None else obs.at
        return st.last_backend_time if st.last_backend_time is not None else st.last_tick


def read_state(path: Path) -> LiveState:
    if not (path / STATUS_FILE).exists():
        raise UsageError(f"--state {path}: no {STATUS_FILE} (has `allot reconcile --state {path}` run?)")
    status = read_status(path)
    return LiveState(path, status, audit_actions(read_audit(path / AUDIT_FILE)), _observation(path))


def conditions_at(state: LiveState, now: float) -> list[Condition]:
    """The reconciler's conditions as a reader should believe them at ``now`` (its own clock)."""
    return conditions(state.status, now)


read_audit = read_lines  # never repairs the log (see the module doc)


def audit_actions(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """What the log says happened: each outcome line, each intent that has none yet as
    ``IN_FLIGHT``, and each operator's request (``allot reconcile suspend|resume|now``: who
    asked as the target, rule ``operator``, result ``requested``), in file order.  A line with
    no ``phase`` (a log from before intents) is an outcome."""
    done = {_key(e) for e in lines if e.get("phase", "outcome") == "outcome"}
    out = []
    for e in lines:
        phase = e.get("phase", "outcome")
        if phase == "control":
            out.append(e | {"target": e.get("by", ""), "rule": "operator", "result": "requested", "dry_run": False})
        elif phase == "outcome":
            out.append(e)
        elif phase == "intent" and _key(e) not in done:
            out.append(e | {"result": IN_FLIGHT})
    return tuple(out)


def _key(e: dict[str, Any]) -> tuple[str, int]:
    return str(e.get("batch", "")), int(e.get("seq", -1))


def _observation(path: Path) -> Observation | None:
    obs = load_observation(path)
    if obs is not None:
        return obs
    sim = path / SIM_FILE
    if sim.exists():
        from allotment.backends.simulated import SimulatedBackend

        # no ``follow``: the cluster as the last tick saved it, not moved on to the wall clock
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
    # ``GitSource.files`` reads the mirror's objects and never fetches (a viewer must not write)
    src: GitSource | DirSource = (
        DirSource(Path(st.source)) if sha == "dir" else GitSource(st.source, "main", state.path)
    )
    day = at or dt.datetime.fromtimestamp(state.now, dt.UTC).date()
    try:
        return compile_config(load_config(src.files(sha)), day, None if sha == "dir" else sha)
    except BackendError as exc:  # no source mirror in the state dir
        raise UsageError(f"--state {state.path}: {exc}") from None
    finally:
        src.close()


def pinned_order(state: LiveState) -> dict[str, dict[str, Any]]:
    """job -> the newest applied ``set_priority`` outcome (the core's order and its reason)."""
    out: dict[str, dict[str, Any]] = {}
    for a in state.actions:
        if a.get("action") == "set_priority" and a.get("result") == "applied" and not a.get("dry_run"):
            out[str(a.get("target"))] = a
    return out
