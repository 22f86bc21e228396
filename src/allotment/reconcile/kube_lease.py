"""The lease as a coordination.k8s.io/v1 ``Lease`` (the Kubernetes backend's own primitive;
``reconcile.leadership`` holds the rule, ``backends.kubernetes.lease_api`` speaks the API).

* The token is ``spec.leaseTransitions``: a takeover writes the next one, and only one of two
  standbys that both saw the lease expire wins it, because the replace carries the
  ``resourceVersion`` it read (the other gets ``409 Conflict``).  Expiry is ``renewTime +
  leaseDurationSeconds`` on each replica's clock (NTP, as for the lease file).  A clean exit
  clears ``holderIdentity`` (client-go's convention: ``kubectl get lease`` shows nobody).
* ``guard`` (every fenced write) reads the Lease and checks holder, token and expiry, and holds
  the state dir's fencing token (``reconcile.lease_fence``) through the write: the API server can
  only be asked before a write, so the token is also checked where the writes land.  A takeover
  raises that token before it writes, waiting for a write in flight to end.
* The token never goes back, even if someone deletes the Lease: a takeover draws one past both
  the Lease's and the state dir's.

The replicas still share the state dir (the ledger's usage window, the audit log and the status
are what a new leader continues from); the election and ``kubectl get lease`` are the API
server's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from allotment.backends.kubernetes.client import KubeClient
from allotment.backends.kubernetes.lease_api import (
    Conflict,
    LeaseObject,
    create_lease,
    get_lease,
    replace_lease,
)
from allotment.errors import BackendError
from allotment.reconcile.leadership import LeaseRecord, LeaseUnreachable, LostLease, refusal
from allotment.reconcile.lease_fence import LeaseFence

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "allotment-system"  # deploy/kubernetes/00-namespace.yaml
DEFAULT_NAME = "allotment-reconciler"


def record(obj: LeaseObject) -> LeaseRecord:
    """The Lease as the rule reads it; a released one (no holder) has already expired."""
    expires = obj.expires_at if obj.holder else obj.renewed_at
    return LeaseRecord(obj.holder, obj.transitions, obj.acquired_at, obj.renewed_at, expires)


class KubeLease:
    def __init__(
        self,
        client: KubeClient,
        state_dir: Path,
        duration_s: int,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        name: str = DEFAULT_NAME,
    ) -> None:
        if duration_s < 1 or duration_s != int(duration_s):
            raise ValueError(f"lease duration {duration_s!r}: a Lease counts whole seconds, >= 1")
        self.client, self.namespace, self.name = client, namespace, name
        self.duration_s = float(duration_s)
        self.fence = LeaseFence(state_dir)

    def _get(self) -> LeaseObject | None:
        try:
            return get_lease(self.client, self.namespace, self.name)
        except BackendError as exc:
            raise LeaseUnreachable(f"lease {self.namespace}/{self.name}: {exc}") from None

    def _put(self, obj: LeaseObject) -> LeaseObject:
        try:
            if obj.resource_version:
                return replace_lease(self.client, obj)
            return create_lease(self.client, obj)
        except BackendError as exc:
            raise LeaseUnreachable(f"lease {self.namespace}/{self.name}: {exc}") from None

    def _with(self, cur: LeaseObject | None, holder: str, token: int, acquired: float, now: float) -> LeaseObject:
        return LeaseObject(
            namespace=self.namespace,
            name=self.name,
            holder=holder,
            duration_s=int(self.duration_s),
            acquired_at=acquired,
            renewed_at=now,
            transitions=token,
            resource_version="" if cur is None else cur.resource_version,
        )

    def read(self) -> LeaseRecord | None:
        try:
            cur = self._get()
        except LeaseUnreachable as exc:
            log.warning("%s", exc)
            return None
        return None if cur is None else record(cur)

    def acquire(self, holder: str, now: float) -> tuple[LeaseRecord | None, LeaseRecord | None]:
        try:
            cur = self._get()
            if cur is not None and cur.holder and now < cur.expires_at:
                if cur.holder != holder:
                    return None, record(cur)
                own = self._put(self._with(cur, holder, cur.transitions, cur.acquired_at, now))
                return record(own), None
            token = max(0 if cur is None else cur.transitions, self.fence.read()[0]) + 1
            got = self._put(self._with(cur, holder, token, now, now))
        except Conflict:  # another standby won this round
            return None, self.read()
        except LeaseUnreachable as exc:
            log.warning("%s", exc)
            return None, None
        if not self.fence.raise_to(token, holder):  # a newer leader came while we waited
            return None, self.read()
        prev = None if cur is None or not cur.holder else record(cur)
        return record(got), prev

    def renew(self, holder: str, token: int, now: float) -> LeaseRecord | None:
        cur = self._get()  # LeaseUnreachable: the renewal tries again
        if cur is None or not record(cur).held_by(holder, token, now):
            return None
        try:
            return record(self._put(self._with(cur, holder, token, cur.acquired_at, now)))
        except Conflict:
            return None

    def release(self, holder: str, token: int, now: float) -> None:
        try:
            cur = self._get()
            if cur is not None and record(cur).held_by(holder, token, now):
                self._put(self._with(cur, "", token, cur.acquired_at, now))
        except (Conflict, LeaseUnreachable) as exc:  # it will expire on its own
            log.warning("lease release: %s", exc)

    @contextmanager
    def guard(self, holder: str, token: int, clock: Callable[[], float]) -> Iterator[LeaseRecord]:
        with self.fence.held(holder, token):
            try:
                cur = self._get()
            except LeaseUnreachable as exc:
                raise LostLease(
                    f"fenced: {holder} (token {token}) cannot check its lease: {exc}"
                ) from None
            rec = None if cur is None else record(cur)
            if rec is None or not rec.held_by(holder, token, clock()):
                raise refusal(holder, token, rec)
            yield rec


def open_kube_lease(
    kubeconfig: str | None,
    context: str | None,
    state_dir: Path,
    duration_s: int,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    name: str = DEFAULT_NAME,
) -> KubeLease:
    """One attempt per call and a timeout of a third of the lease: a Lease call that has to be
    retried is answered by the next renewal or poll, and a conflict is an answer, not a fault."""
    client = KubeClient.from_kubeconfig(
        kubeconfig, context, timeout_s=max(1.0, duration_s / 3), attempts=1
    )
    return KubeLease(client, state_dir, duration_s, namespace=namespace, name=name)
