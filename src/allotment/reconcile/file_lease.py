"""The lease on shared storage (Slurm, sim and file backends): ``STATE/lease/lease.json``
guarded by ``fcntl`` locks on ``STATE/lease/lock`` (``reconcile.leadership`` holds the rule).

* ``acquire``/``renew``/``release`` take the lock **exclusively**, read the record, decide, and
  replace it atomically (temp file, fsync, rename), so two candidates never both win.
* ``guard`` (every fenced write) takes it **shared** and checks the record under it: holder,
  token, unexpired.  A takeover needs the exclusive lock, so it cannot complete while a write
  that passed the check is still running; and a writer that checks after the takeover sees the
  new token and writes nothing.  That is the fencing token checked on the primitive at every
  write, not a flag remembered in memory.
* A process killed while holding the lock loses it with its file descriptor (the kernel drops
  ``fcntl``/``flock`` locks of a dead process).  A process *stopped* inside a guarded write keeps
  it: the takeover waits for that one write to end (it was authorised under a valid lease), and
  the process then finds its lease gone and writes nothing more.

The lease lives in its own folder so that a leader's clean-up of interrupted writes in the
state dir (``atomic_file.remove_stale_temps``) never removes a candidate's lease temp file.
Expiry is read on each replica's wall clock: replicas on different hosts need their clocks
synchronised (NTP) to well within the lease duration.  The storage must honour ``fcntl`` locks
across hosts (NFSv4 with lockd, CephFS, GPFS, Lustre with ``flock``); docs/operators-guide.md.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from allotment.atomic_file import write_text
from allotment.reconcile.leadership import LeaseRecord, refusal
from allotment.reconcile.state_errors import StateDirError, StateFileError
from allotment.strict_json import loads_finite

LEASE_DIR = "lease"


def lease_dir(state_dir: Path) -> Path:
    """The state dir's lease folder, made if missing (a state dir that cannot hold it: exit 2)."""
    d = state_dir / LEASE_DIR
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateDirError(f"{d}: {exc.strerror or exc}") from exc
    return d


@contextmanager
def flocked(lock_path: Path, how: int) -> Iterator[None]:
    """Hold ``flock(how)`` on ``lock_path`` for the block; closing the file drops the lock."""
    with lock_path.open("a") as f:
        fcntl.flock(f, how)
        yield


class FileLease:
    def __init__(self, state_dir: Path, duration_s: float) -> None:
        if not duration_s > 0:
            raise ValueError(f"lease duration {duration_s!r} must be positive")
        self.dir = lease_dir(state_dir)
        self.path = self.dir / "lease.json"
        self.lock_path = self.dir / "lock"
        self.duration_s = duration_s

    def _locked(self, how: int) -> AbstractContextManager[None]:
        return flocked(self.lock_path, how)

    def read(self) -> LeaseRecord | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            raw = loads_finite(text)
            return LeaseRecord(
                str(raw["holder"]),
                int(raw["token"]),
                float(raw["acquired_at"]),
                float(raw["renewed_at"]),
                float(raw["expires_at"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise StateFileError(f"{self.path}: not a lease record ({exc})") from None

    def _write(self, rec: LeaseRecord) -> None:
        text = json.dumps(
            {
                "holder": rec.holder,
                "token": rec.token,
                "acquired_at": rec.acquired_at,
                "renewed_at": rec.renewed_at,
                "expires_at": rec.expires_at,
            },
            sort_keys=True,
        )
        write_text(self.path, text + "\n", durable=True)

    def acquire(self, holder: str, now: float) -> tuple[LeaseRecord | None, LeaseRecord | None]:
        with self._locked(fcntl.LOCK_EX):
            cur = self.read()
            if cur is not None and cur.valid_at(now):
                if cur.holder != holder:
                    return None, cur
                new = LeaseRecord(holder, cur.token, cur.acquired_at, now, now + self.duration_s)
                self._write(new)
                return new, None
            token = (cur.token if cur is not None else 0) + 1
            new = LeaseRecord(holder, token, now, now, now + self.duration_s)
            self._write(new)
            return new, cur

    def renew(self, holder: str, token: int, now: float) -> LeaseRecord | None:
        with self._locked(fcntl.LOCK_EX):
            cur = self.read()
            if cur is None or not cur.held_by(holder, token, now):
                return None
            new = LeaseRecord(holder, token, cur.acquired_at, now, now + self.duration_s)
            self._write(new)
            return new

    def release(self, holder: str, token: int, now: float) -> None:
        with self._locked(fcntl.LOCK_EX):
            cur = self.read()
            if cur is not None and cur.held_by(holder, token, now):
                self._write(LeaseRecord(holder, token, cur.acquired_at, now, now))

    @contextmanager
    def guard(self, holder: str, token: int, clock: Callable[[], float]) -> Iterator[LeaseRecord]:
        with self._locked(fcntl.LOCK_SH):
            cur = self.read()
            now = clock()
            if cur is None or not cur.held_by(holder, token, now):
                raise refusal(holder, token, cur)
            yield cur
