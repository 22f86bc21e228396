"""Who may act: one leader among ``allot reconcile`` replicas, through a lease with a fencing
token (issue 31, item 1).

Why a lease and not a lock: a lock held by a dead or cut-off process is either never released
(the cluster stops converging) or released by a timeout the holder cannot observe.  A lease says
both who holds it and until when; a standby takes it over once it has expired, and each takeover
draws the next **fencing token**.  Every write a leader makes (status, audit, ledger, memory,
observation, and every backend action) is made inside ``Leadership.fence()``, which checks, on
the coordination primitive itself and at the moment of the write, that the lease is still this
replica's, under this token, and unexpired.  So an old leader that was paused (SIGSTOP, a long
GC, a partition) and wakes after its lease expired writes nothing: its first write raises
``LostLease`` and it steps down to standby (``reconcile.replicas``).

The primitive is a strategy (``LeaseStore``): a lease file on shared storage for the Slurm, sim
and file backends (``reconcile.file_lease``), a coordination.k8s.io/v1 ``Lease`` for the
Kubernetes backend (``reconcile.kube_lease``: optimistic concurrency on ``resourceVersion``,
``leaseTransitions`` as the token).  This module holds the rule (one holder, tokens only grow,
every write fenced, renewal in the background at a third of the lease); the stores hold the
mechanism.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Protocol

from allotment.errors import ReconcileError

log = logging.getLogger(__name__)

Fence = Callable[[], AbstractContextManager[None]]
"""What guards one write: enter it around the write; it raises ``LostLease`` when this replica
may no longer write.  ``no_fence`` for a single reconciler (its state-dir lock is its guard)."""


def no_fence() -> AbstractContextManager[None]:
    return nullcontext()


class LostLease(ReconcileError):
    """This replica is no longer the leader (its lease expired or another took it over); the
    write it was about to make was not made."""


class LeaseUnreachable(ReconcileError):
    """The primitive did not answer (an API server down, a timeout): nothing is known, so a
    renewal tries again until the lease would have expired, and a write is refused."""


def refusal(holder: str, token: int, cur: LeaseRecord | None) -> LostLease:
    """The one wording of a fenced write, whichever primitive refused it."""
    who = "nobody" if cur is None or not cur.holder else f"{cur.holder} (token {cur.token})"
    expired = cur is not None and cur.holder == holder
    return LostLease(
        f"fenced: {holder} (token {token}) may no longer write; the lease is {who}'s"
        + (", expired" if expired else "")
    )


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The lease as the primitive holds it.  ``token`` grows by one at every change of holder
    (and at a holder's own re-acquisition after expiry), never otherwise."""

    holder: str
    token: int
    acquired_at: float  # Unix seconds: when ``holder`` took it with this token
    renewed_at: float
    expires_at: float

    def valid_at(self, now: float) -> bool:
        return now < self.expires_at

    def held_by(self, holder: str, token: int, now: float) -> bool:
        return self.holder == holder and self.token == token and self.valid_at(now)


class LeaseStore(Protocol):
    """One coordination primitive.  ``acquire`` and ``renew`` are atomic read-modify-writes on
    it; ``guard`` holds the primitive so that no takeover happens while the guarded write runs."""

    duration_s: float

    def read(self) -> LeaseRecord | None: ...

    def acquire(self, holder: str, now: float) -> tuple[LeaseRecord | None, LeaseRecord | None]:
        """Take the lease if it is free or expired: (the new record, the one it replaced), or
        (None, the current one) when another replica holds it."""
        ...

    def renew(self, holder: str, token: int, now: float) -> LeaseRecord | None:
        """Extend the lease still held under ``token``; None when it is not (lost)."""
        ...

    def release(self, holder: str, token: int, now: float) -> None:
        """Let it expire now (a clean exit), if still held under ``token``."""
        ...

    def guard(
        self, holder: str, token: int, clock: Callable[[], float]
    ) -> AbstractContextManager[LeaseRecord]:
        """Enter only while the lease is held under ``token`` at ``clock()``; ``LostLease``
        otherwise.  No takeover can complete while inside."""
        ...


def default_identity() -> str:
    """``host-pid``: unique among live replicas (a restarted one is a new holder)."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Leadership:
    """This replica's side of the election: ``try_lead`` (standby), ``fence`` (every write), a
    background renewal every third of the lease, ``step_down``/``release``."""

    def __init__(
        self, store: LeaseStore, identity: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store, self.identity, self.clock = store, identity, clock
        self.record: LeaseRecord | None = None  # ours while leading
        self.previous: LeaseRecord | None = None  # what our takeover replaced
        self.seen: LeaseRecord | None = None  # the lease as last read (``reconcile.lease_metrics``)
        self._lost = threading.Event()
        self._stop_renewing = threading.Event()
        self._renewer: threading.Thread | None = None

    @property
    def token(self) -> int | None:
        return None if self.record is None else self.record.token

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def try_lead(self) -> bool:
        rec, prev = self.store.acquire(self.identity, self.clock())
        self.seen = rec or prev
        if rec is None:
            return False
        self.record, self.previous = rec, prev
        self._lost.clear()
        self._stop_renewing.clear()
        self._renewer = threading.Thread(target=self._renew, name="lease-renewal", daemon=True)
        self._renewer.start()
        return True

    def current(self) -> LeaseRecord | None:
        self.seen = self.store.read()
        return self.seen

    def leads(self, now: float) -> bool:
        """Whether this replica holds the lease as far as it knows (its fenced writes check it
        on the primitive); what ``allotment_leader`` exports."""
        rec = self.record
        return rec is not None and not self.lost and rec.valid_at(now)

    @contextmanager
    def fence(self) -> Iterator[None]:
        rec = self.record
        if rec is None or self.lost:
            raise LostLease(f"{self.identity} does not hold the lease")
        with self.store.guard(self.identity, rec.token, self.clock):
            yield

    def _renew(self) -> None:
        every = self.store.duration_s / 3
        while not self._stop_renewing.wait(every):
            rec = self.record
            if rec is None:
                return
            try:
                new = self.store.renew(self.identity, rec.token, self.clock())
            except (OSError, LeaseUnreachable) as exc:  # keep trying until it expires
                log.warning("lease renewal failed: %s", exc)
                continue
            if new is None:
                log.warning("lease lost (token %d): stepping down", rec.token)
                self._lost.set()
                return
            self.record = self.seen = new

    def step_down(self) -> None:
        self._stop_renewing.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join()
        self._renewer = None
        self.record = None

    def release(self) -> None:
        """A clean exit: hand the lease over at once instead of making standbys wait it out."""
        rec = self.record
        self.step_down()
        if rec is not None:
            try:
                self.store.release(self.identity, rec.token, self.clock())
            except OSError as exc:
                log.warning("lease release failed: %s", exc)
