"""Nodes and pods as the reconciler sees them (pure: JSON in, ``Observation`` parts out).

* A node's GPUs are its allocatable ``nvidia.com/gpu``; ``drain`` is ``spec.unschedulable``
  (cordoned); ``down`` is a ``Ready`` condition that is not True, or a NoExecute taint.
* A job is a gang of pods sharing ``allotment.dev/job`` (else KAI's ``pod-group-name``
  annotation, else the pod alone).  It runs once every pod is bound to a node; its start is the
  earliest pod start.  Its queue (KAI's ``kai.scheduler/queue`` label) names a tier queue
  ``<leaf>-<tier>``, which gives the account, the QOS and the minimum runtime; an
  ``allotment.dev/min-runtime`` annotation (Go duration) declares a job's own, and unallocated
  work has none.  Order is ``allotment.dev/priority`` (what ``set_priority`` writes), default 1.
  Finished pods and pods being deleted are not work.
* What a user declares for the within-team order (issue 28, item 3; docs/kubernetes.md) is read
  from the gang's first pod: ``allotment.dev/declared-priority`` (an integer, clamped to 32
  bits; else 0), ``allotment.dev/deadline`` (RFC 3339 or Unix seconds; else none) and
  ``allotment.dev/depends-on`` (the ids of the jobs it waits for, comma-separated).  A value
  that does not parse counts as not given, as Slurm's comment key does.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from allotment.backends.kubernetes import names as n
from allotment.backends.policy import UNALLOCATED_QOS
from allotment.backends.protocol import JobObs, NodeObs

Obj = Mapping[str, Any]
# Kubernetes has no held jobs; only an explicit allotment.dev/priority "0" holds one (as in Slurm)
DEFAULT_PRIORITY = 1


@dataclass(frozen=True, slots=True)
class TierInfo:
    """What a tier queue stands for."""

    account: str
    qos: str
    min_runtime_s: int


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _gpus(resources: Obj | None) -> int:
    raw = (resources or {}).get(n.GPU_RESOURCE)
    return int(str(raw)) if raw not in (None, "") else 0


def pod_gpus(pod: Obj) -> int:
    total = 0
    for c in pod.get("spec", {}).get("containers") or []:
        r = c.get("resources") or {}
        total += _gpus(r.get("limits")) or _gpus(r.get("requests"))
    return total


def is_work(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def job_id(pod: Obj) -> str:
    meta = pod["metadata"]
    labels, ann = meta.get("labels") or {}, meta.get("annotations") or {}
    return str(
        labels.get(n.JOB_LABEL)
        or ann.get(n.POD_GROUP_ANNOTATION)
        or f"{meta.get('namespace', '')}/{meta['name']}"
    )


def gangs(pods: Iterable[Obj]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for p in pods:
        if is_work(p):
            out.setdefault(job_id(p), []).append(p)
    return out


def node_obs(node: Obj, used: int) -> NodeObs:
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    gpus = _gpus(status.get("allocatable")) or _gpus(status.get("capacity"))
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    not_ready = ready is not None and ready.get("status") != "True"
    no_exec = any(t.get("effect") == "NoExecute" for t in spec.get("taints") or [])
    reason = (meta.get("annotations") or {}).get(n.DRAIN_ANNOTATION, "")
    if not reason and not_ready:
        reason = f"NotReady: {ready.get('message', '') if ready else ''}".strip()
    return NodeObs(
        name=meta["name"],
        gpus=gpus,
        gpus_used=used,
        drain=bool(spec.get("unschedulable")),
        down=not_ready or no_exec,
        reason=reason,
    )


def job_obs(jid: str, pods: list[Obj], tiers: Mapping[str, TierInfo]) -> JobObs:
    first = min(pods, key=lambda p: p["metadata"]["name"])
    meta = first["metadata"]
    labels, ann = meta.get("labels") or {}, meta.get("annotations") or {}
    queue = labels.get(n.QUEUE_LABEL, "")
    tier = tiers.get(queue)
    account, qos = (tier.account, tier.qos) if tier else (queue, "")
    min_rt: int | None = tier.min_runtime_s if tier else None
    declared = n.parse_go_duration(ann.get(n.MIN_RUNTIME_ANNOTATION, "")) if ann else None
    if declared is not None:
        min_rt = declared
    if qos == UNALLOCATED_QOS:
        min_rt = 0
    bound = [p["spec"].get("nodeName") for p in pods]
    running = all(bound)
    starts = [parse_time((p.get("status") or {}).get("startTime")) for p in pods]
    created = [parse_time(p["metadata"].get("creationTimestamp")) or 0.0 for p in pods]
    start = min((s for s in starts if s is not None), default=max(created)) if running else None
    prio = ann.get(n.PRIORITY_ANNOTATION)
    return JobObs(
        id=jid,
        user=labels.get(n.USER_LABEL) or meta.get("namespace", ""),
        account=account,
        qos=qos,
        gpus=sum(pod_gpus(p) for p in pods),
        state="running" if running else "pending",
        submit=min(created),
        start=start,
        min_runtime_s=min_rt,
        resumable=ann.get(n.RESUMABLE_ANNOTATION, "true").lower() != "false",
        priority=int(prio) if prio and prio.lstrip("-").isdigit() else DEFAULT_PRIORITY,
        nodes=tuple(sorted({b for b in bound if b})),
        partition=queue,
        kind=labels.get(n.JOB_KIND_LABEL) or None,
        declared_priority=declared_priority(ann.get(n.DECLARED_PRIORITY_ANNOTATION)),
        deadline=deadline(ann.get(n.DEADLINE_ANNOTATION)),
        depends_on=depends_on(ann.get(n.DEPENDS_ON_ANNOTATION)),
    )


def declared_priority(text: str | None) -> int:
    """``allotment.dev/declared-priority``: an integer clamped to 32 bits; 0 if absent or not one."""
    try:
        return max(-(2**31), min(2**31 - 1, int(str(text).strip()))) if text else 0
    except ValueError:
        return 0


def deadline(text: str | None) -> float | None:
    """``allotment.dev/deadline``: an RFC 3339 time (``2026-12-05T18:00:00Z``) or Unix seconds;
    None if absent or neither."""
    if not text or not text.strip():
        return None
    t = text.strip()
    try:
        seconds = float(t)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) else None
    try:
        at = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=dt.UTC)).timestamp()


def depends_on(text: str | None) -> tuple[str, ...]:
    """``allotment.dev/depends-on``: job ids (as this backend names jobs: the
    ``allotment.dev/job`` label, else the pod group, else ``namespace/pod``), comma-separated,
    each once, in the order given."""
    out: list[str] = []
    for part in (text or "").split(","):
        job = part.strip()
        if job and job not in out:
            out.append(job)
    return tuple(out)


def cluster_obs(
    nodes: Iterable[Obj], pods: Iterable[Obj], tiers: Mapping[str, TierInfo]
) -> tuple[tuple[NodeObs, ...], tuple[JobObs, ...], dict[str, list[Obj]]]:
    """Nodes sorted by name, jobs sorted by id (numeric ids numerically), and the gangs."""
    g = gangs(pods)
    used: dict[str, int] = {}
    for members in g.values():
        for p in members:
            host = p["spec"].get("nodeName")
            if host:
                used[host] = used.get(host, 0) + pod_gpus(p)
    node_list = tuple(
        sorted(
            (node_obs(x, used.get(x["metadata"]["name"], 0)) for x in nodes),
            key=lambda o: o.name,
        )
    )
    jobs = tuple(
        sorted(
            (job_obs(j, members, tiers) for j, members in g.items()),
            key=lambda j: (0, int(j.id), "") if j.id.isdigit() else (1, 0, j.id),
        )
    )
    return node_list, jobs, g
