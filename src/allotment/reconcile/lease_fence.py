"""The fencing token kept where the writes land: ``STATE/lease/fence.json``, the highest token
that has led on this state dir, guarded by ``fcntl`` locks on ``STATE/lease/fence.lock``.

Why a lease held elsewhere (a Kubernetes ``Lease``) needs this: the API server can only be
asked *before* a write (a read, then the write), and its ``resourceVersion`` guards the Lease
object, not the state dir or the cluster actions.  A leader paused between the check and the
write would write after a takeover.  So the token is also kept next to the writes, as a fencing
token should be (the resource checks it, not only the writer):

* a new leader, once it holds the Lease under token ``t``, raises this file to ``t`` under the
  **exclusive** lock, before it writes anything (``raise_to``);
* every fenced write runs under the **shared** lock with this file still at its own token
  (``held``), on top of the Lease check.

A takeover's raise therefore waits for a write that passed its check to end, and a writer that
checks after the raise sees the newer token and writes nothing: the same guarantee the lease
file gives with its own lock (``reconcile.file_lease``).  A process killed while holding the
lock loses it with its file descriptor.  Requirements are the lease file's: the shared storage
must honour ``flock`` across hosts.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from allotment.atomic_file import write_text
from allotment.reconcile.file_lease import flocked, lease_dir
from allotment.reconcile.leadership import LostLease
from allotment.reconcile.state_errors import StateFileError
from allotment.strict_json import loads_finite


class LeaseFence:
    def __init__(self, state_dir: Path) -> None:
        self.dir = lease_dir(state_dir)
        self.path = self.dir / "fence.json"
        self.lock_path = self.dir / "fence.lock"

    def _locked(self, how: int) -> AbstractContextManager[None]:
        return flocked(self.lock_path, how)

    def read(self) -> tuple[int, str]:
        """(token, holder) of the last leader that raised it; (0, "") before any."""
        try:
            raw = loads_finite(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return 0, ""
        except ValueError as exc:
            raise StateFileError(f"{self.path}: not a fence record ({exc})") from None
        try:
            return int(raw["token"]), str(raw["holder"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StateFileError(f"{self.path}: not a fence record ({exc})") from None

    def raise_to(self, token: int, holder: str) -> bool:
        """Make ``token`` the one that may write; False when the file already holds it or a
        newer one (another leader came after).  Waits for a fenced write in flight to end."""
        with self._locked(fcntl.LOCK_EX):
            if self.read()[0] >= token:
                return False
            text = json.dumps({"holder": holder, "token": token}, sort_keys=True)
            write_text(self.path, text + "\n", durable=True)
            return True

    @contextmanager
    def held(self, holder: str, token: int) -> Iterator[None]:
        """Enter only while this file is at ``token``; ``LostLease`` otherwise.  No raise can
        complete while inside."""
        with self._locked(fcntl.LOCK_SH):
            cur, who = self.read()
            if cur != token:
                raise LostLease(
                    f"fenced: {holder} (token {token}) may no longer write; the state dir's"
                    f" fencing token is {cur} ({who or 'nobody'})"
                )
            yield
