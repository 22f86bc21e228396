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
import os
import sqlite3
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from allotment.backends.protocol import Observation
from allotment.compile.model import CompiledConfig
from allotment.errors import BackendError, UsageError
from allotment.reconcile.audit import audit_key, entry_of, read_lines, rotated
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


@dataclass(slots=True)
class AuditDigest:
    """What the views read of the audit log, built one entry at a time, so a server extends it
    with what was appended since its last request instead of re-reading the log (issue 32,
    item 4: at 1M lines a scrape re-read 222 MB and took 10.9 s).  ``recent`` keeps the last
    ``keep`` entries (None: all, for the one-shot commands); the counts and the pinned order
    cover the whole log."""

    keep: int | None = None
    recent: deque[dict[str, Any]] = field(default_factory=deque)
    open: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # intents in flight
    preemptions: dict[str, int] = field(default_factory=dict)  # applied requeues/cancels by rule
    pinned: dict[str, dict[str, Any]] = field(default_factory=dict)  # job -> newest set_priority

    def __post_init__(self) -> None:
        self.recent = deque(self.recent, maxlen=self.keep)

    def add(self, e: dict[str, Any]) -> None:
        """One entry, in file order.  A line with no ``phase`` (from before intents) is an outcome."""
        phase = e.get("phase", "outcome")
        if phase == "intent":
            self.open[audit_key(e)] = e
        elif phase == "outcome":
            self.open.pop(audit_key(e), None)
            if e.get("result") == "applied" and not e.get("dry_run"):
                if e.get("action") in ("requeue", "cancel"):
                    rule = str(e.get("rule"))
                    self.preemptions[rule] = self.preemptions.get(rule, 0) + 1
                elif e.get("action") == "set_priority":
                    self.pinned[str(e.get("target"))] = e
        elif phase != "control":
            return
        self.recent.append(e)

    def actions(self) -> tuple[dict[str, Any], ...]:
        """What the log says happened: each outcome, each intent that has none yet as
        ``IN_FLIGHT``, and each operator's request (``allot reconcile suspend|resume|now``: who
        asked as the target, rule ``operator``, result ``requested``), in file order."""
        out = []
        for e in self.recent:
            phase = e.get("phase", "outcome")
            if phase == "control":
                out.append(e | {"target": e.get("by", ""), "rule": "operator", "result": "requested", "dry_run": False})
            elif phase == "outcome":
                out.append(e)
            elif self.open.get(audit_key(e)) is e:
                out.append(e | {"result": IN_FLIGHT})
        return tuple(out)


_CHUNK = 1 << 22  # 4 MiB


class AuditTail:
    """The audit log read incrementally: each ``read`` parses only the whole lines appended
    since the last one, and starts over when the file was replaced or cut (rotated, moved)."""

    def __init__(self, path: Path, keep: int = 200) -> None:
        self.path, self.keep = path, keep
        self._id: tuple[int, int] | None = None
        self._offset = 0
        self.digest = AuditDigest(keep)

    def read(self) -> AuditDigest:
        try:
            f = self.path.open("rb")
        except FileNotFoundError:
            self._id, self._offset, self.digest = None, 0, AuditDigest(self.keep)
            return self.digest
        with f:
            st = os.fstat(f.fileno())
            if (st.st_dev, st.st_ino) != self._id or st.st_size < self._offset:
                if not self._finish_rotated():
                    self.digest = AuditDigest(self.keep)
                self._id, self._offset = (st.st_dev, st.st_ino), 0
            self._read_on(f)
        return self.digest

    def _finish_rotated(self) -> bool:
        """When the file read so far was rotated to ``.1``, read its rest and keep the digest
        (counts and pinned order go on); otherwise (moved away, cut) the caller starts over."""
        try:
            with rotated(self.path, 1).open("rb") as old:
                st = os.fstat(old.fileno())
                if self._id != (st.st_dev, st.st_ino) or st.st_size < self._offset:
                    return False
                self._read_on(old)
                return True
        except FileNotFoundError:
            return False

    def _read_on(self, f: BinaryIO) -> None:
        """Whole lines from ``_offset`` on, one chunk at a time (memory: a chunk, not the file)."""
        f.seek(self._offset)
        rest = b""
        while chunk := f.read(_CHUNK):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1  # a line still being written waits for its end
            rest, self._offset = data[cut:], self._offset + cut
            for line in data[:cut].decode("utf-8", errors="replace").splitlines():
                entry, _ = entry_of(line)
                if entry is not None:
                    self.digest.add(entry)


@dataclass(frozen=True, slots=True)
class LiveState:
    path: Path
    status: Status
    audit: AuditDigest
    observation: Observation | None

    @property
    def actions(self) -> tuple[dict[str, Any], ...]:
        """Audit outcomes (and intents in flight), oldest first."""
        return self.audit.actions()

    @property
    def now(self) -> float:
        """The backend's clock at the last observation (the ledger's and the contract's)."""
        obs, st = self.observation, self.status
        if obs is not None:
            return obs.backend_now if obs.backend_now is not None else obs.at
        return st.last_backend_time if st.last_backend_time is not None else st.last_tick


def read_state(path: Path, audit: AuditTail | None = None) -> LiveState:
    """``audit``: a server's incremental reader of the log (None: read it all, once)."""
    if not (path / STATUS_FILE).exists():
        raise UsageError(f"--state {path}: no {STATUS_FILE} (has `allot reconcile --state {path}` run?)")
    status = read_status(path)
    digest = audit.read() if audit is not None else _digest(read_audit(path / AUDIT_FILE))
    return LiveState(path, status, digest, _observation(path))


def _digest(lines: list[dict[str, Any]]) -> AuditDigest:
    d = AuditDigest()
    for e in lines:
        d.add(e)
    return d


def conditions_at(state: LiveState, now: float) -> list[Condition]:
    """The reconciler's conditions as a reader should believe them at ``now`` (its own clock)."""
    return conditions(state.status, now)


read_audit = read_lines  # never repairs the log (see the module doc)


def audit_actions(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """What the log says happened (``AuditDigest.actions``) of a whole list of entries."""
    return _digest(lines).actions()


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
        return compile_config(load_config(src.files(sha), day), day, None if sha == "dir" else sha)
    except BackendError as exc:  # no source mirror in the state dir
        raise UsageError(f"--state {state.path}: {exc}") from None
    finally:
        src.close()


def pinned_order(state: LiveState) -> dict[str, dict[str, Any]]:
    """job -> the newest applied ``set_priority`` outcome (the core's order and its reason)."""
    return state.audit.pinned
