"""What an operator asks of a running reconciler, without stopping it: suspend, resume, and
"reconcile now" (Flux's ``flux suspend|resume`` and ``flux reconcile``).

The request is a small file in the state dir, ``control.json``, replaced atomically by
``allot reconcile suspend|resume|now`` and read by the reconciler at every tick and, between
ticks, every ``POLL_S`` (so "now" is served in about that time, not at the next interval).  A
file rather than a signal: it survives a restart (a suspended reconciler that is restarted stays
suspended, as a Flux object's ``spec.suspend`` does), needs no process id, and works from another
host when the state dir is on shared storage.

* Suspended, the reconciler keeps observing (fetch, compile, diff, observe the cluster, charge
  the ledger, write status and ``observation.json``) but applies nothing: every action is only
  dry-run, the status says ``Ready=False, Suspended`` with how many actions are held, and no
  revision becomes ``last_applied_revision``.
* "Now" is Flux's ``requestedAt`` annotation: a time; the reconciler ticks when it sees one newer
  than the last it handled and writes it back as ``last_handled_reconcile_at`` in
  ``status.json``, which ``allot reconcile now`` waits for.

Every request is also recorded in the audit log, with who asked and why, by the command that
asks (one ``"phase": "control"`` line, appended in one write), so the record exists even while
no reconciler runs.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.reconcile.state_errors import StateDirError, StateFileError, write_atomic
from allotment.strict_json import loads_finite
from allotment.timefmt import parse_rfc3339, rfc3339

CONTROL_FILE = "control.json"
POLL_S = 0.5  # how often a waiting reconciler looks for a new request


@dataclass(frozen=True, slots=True)
class Suspension:
    by: str  # user@host that asked
    since: float  # Unix seconds
    reason: str


@dataclass(frozen=True, slots=True)
class Control:
    suspended: Suspension | None = None
    requested_at: float | None = None  # the newest "reconcile now" (Unix seconds)

    def to_json(self) -> dict[str, Any]:
        s = self.suspended
        return {
            "suspend": None
            if s is None
            else {"by": s.by, "since": rfc3339(s.since, ms=True), "reason": s.reason},
            "requestedAt": None if self.requested_at is None else rfc3339(self.requested_at, ms=True),
        }


def read_control(state_dir: Path) -> Control:
    """The operator's requests (none when there is no file); StateFileError for a file of the
    wrong shape, so a hand edit gone wrong is one line, not a silent resume."""
    path = state_dir / CONTROL_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Control()
    except OSError as exc:
        raise StateDirError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        raw = loads_finite(text)
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        s = raw.get("suspend")
        susp = None
        if s is not None:
            if not isinstance(s, dict):
                raise ValueError("suspend: not an object")
            susp = Suspension(str(s.get("by", "")), parse_rfc3339(str(s["since"])), str(s.get("reason", "")))
        req = raw.get("requestedAt")
        return Control(susp, None if req is None else parse_rfc3339(str(req)))
    except (ValueError, KeyError, TypeError) as exc:
        raise StateFileError(f"{path}: not a reconciler control file ({exc})") from None


def who() -> str:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def request(state_dir: Path, verb: str, now: float, reason: str = "") -> Control:
    """Record ``verb`` (``suspend``, ``resume`` or ``now``): the audit line first, then the
    control file.  Suspend and resume also ask for a tick, so the status shows them within
    ``POLL_S`` rather than at the next interval."""
    if not state_dir.is_dir():
        raise StateFileError(f"--state {state_dir}: no such state dir (has `allot reconcile --state {state_dir}` run?)")
    now = parse_rfc3339(rfc3339(now, ms=True))  # as the file will hold it, so a wait compares equal
    old = read_control(state_dir)
    by = who()
    if verb == "suspend":
        new = Control(old.suspended or Suspension(by, now, reason), now)
    elif verb == "resume":
        new = Control(None, now)
    else:
        new = Control(old.suspended, now)
    append_control_line(state_dir / "audit.jsonl", verb, now, by, reason)
    write_atomic(state_dir / CONTROL_FILE, json.dumps(new.to_json(), sort_keys=True, indent=2) + "\n")
    return new


def append_control_line(path: Path, verb: str, now: float, by: str, reason: str) -> None:
    """One audit line, in one ``write`` on an ``O_APPEND`` descriptor, so it never interleaves
    with a batch the running reconciler is appending."""
    from allotment.reconcile.audit import audit_time

    entry = {"time": audit_time(now), "phase": "control", "action": verb, "by": by, "reason": reason}
    data = (json.dumps(entry, sort_keys=True) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StateDirError(f"{path}: {exc.strerror or exc}") from exc


def suspended_words(s: Suspension) -> str:
    why = f": {s.reason}" if s.reason else ""
    return f"suspended by {s.by} since {rfc3339(s.since)}{why}"


