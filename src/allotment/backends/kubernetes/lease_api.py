"""A coordination.k8s.io/v1 ``Lease`` as plain values: read it, create it, replace it under
``resourceVersion`` (the API server's optimistic concurrency).  The rule that uses it (who may
take the lease, the fencing token, every write checked) is ``reconcile.kube_lease``; this file
only speaks the API, so it sits with the other Kubernetes client code below ``reconcile``.

Why ``PUT`` with ``resourceVersion`` and not server-side apply: a takeover must succeed only if
nobody changed the Lease since it was read (two standbys that both saw it expire must not both
win), which is exactly what a replace carrying the read ``resourceVersion`` gives: the second
one gets ``409 Conflict``.  A conflict is an answer here, not a fault, so it is never retried
(``Conflict`` below); the client this file is given should make one attempt per call.

Times are ``MicroTime`` (RFC 3339 with microseconds, UTC); ``leaseDurationSeconds`` is whole
seconds, as the API defines it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.names import FIELD_MANAGER
from allotment.timefmt import parse_rfc3339


class Conflict(Exception):
    """The Lease changed since it was read (409), or it was created meanwhile (409
    AlreadyExists), or deleted (404): another replica won; not an error of the API server."""


@dataclass(frozen=True, slots=True)
class LeaseObject:
    """The fields of a Lease the election reads.  ``holder`` is ``""`` when nobody holds it
    (released, as client-go's leader election also leaves it)."""

    namespace: str
    name: str
    holder: str
    duration_s: int
    acquired_at: float  # Unix seconds
    renewed_at: float
    transitions: int
    resource_version: str

    @property
    def expires_at(self) -> float:
        return self.renewed_at + self.duration_s


def micro_time(t: float) -> str:
    """Unix seconds as a Kubernetes ``MicroTime`` (``2026-12-04T19:00:00.123456Z``): the wire
    format of the Lease's times, which the API server parses with exactly six fraction digits
    (``timefmt.rfc3339`` writes what people read, to the second or millisecond)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _path(namespace: str, name: str | None = None) -> str:
    base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    return base if name is None else f"{base}/{name}"


def _parse(obj: dict[str, Any]) -> LeaseObject:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    acquired = spec.get("acquireTime") or renewed
    return LeaseObject(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        holder=str(spec.get("holderIdentity") or ""),
        duration_s=int(spec.get("leaseDurationSeconds") or 0),
        acquired_at=parse_rfc3339(acquired) if acquired else 0.0,
        renewed_at=parse_rfc3339(renewed) if renewed else 0.0,
        transitions=int(spec.get("leaseTransitions") or 0),
        resource_version=str(meta.get("resourceVersion", "")),
    )


def _body(lease: LeaseObject) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "leaseDurationSeconds": lease.duration_s,
        "acquireTime": micro_time(lease.acquired_at),
        "renewTime": micro_time(lease.renewed_at),
        "leaseTransitions": lease.transitions,
    }
    if lease.holder:
        spec["holderIdentity"] = lease.holder
    meta: dict[str, Any] = {
        "name": lease.name,
        "namespace": lease.namespace,
        "labels": {"app.kubernetes.io/name": "allotment"},
    }
    if lease.resource_version:
        meta["resourceVersion"] = lease.resource_version
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def get_lease(client: KubeClient, namespace: str, name: str) -> LeaseObject | None:
    try:
        return _parse(client.get(_path(namespace, name)))
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


def create_lease(client: KubeClient, lease: LeaseObject) -> LeaseObject:
    """Create it; ``Conflict`` when another replica created it first."""
    try:
        got = client.request(
            "POST", _path(lease.namespace), query={"fieldManager": FIELD_MANAGER}, body=_body(lease)
        )
    except ApiError as exc:
        if exc.status == 409:
            raise Conflict(f"lease {lease.namespace}/{lease.name} was created meanwhile") from None
        raise
    return _parse(got)


def replace_lease(client: KubeClient, lease: LeaseObject) -> LeaseObject:
    """Replace it if it is still at ``lease.resource_version``; ``Conflict`` otherwise."""
    try:
        got = client.request(
            "PUT",
            _path(lease.namespace, lease.name),
            query={"fieldManager": FIELD_MANAGER},
            body=_body(lease),
        )
    except ApiError as exc:
        if exc.status in (404, 409):
            raise Conflict(
                f"lease {lease.namespace}/{lease.name} changed since resourceVersion"
                f" {lease.resource_version} ({exc})"
            ) from None
        raise
    return _parse(got)
