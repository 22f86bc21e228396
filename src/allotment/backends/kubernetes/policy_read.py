"""Reading allotment's objects back from Kubernetes (pure: JSON in, policy records out).

A budget ``Queue`` reads back as an account (parent from ``spec.parentQueue``, fair-share
weight from ``overQuotaWeight``), a ``PriorityClass`` as a QOS (fields in annotations), a user
ConfigMap as a user; tier queues say which account and QOS they carry.  ``foreign_fields``
names the fields of ours that another field manager changed (the drift a forced apply takes
back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.observe import TierInfo
from allotment.backends.policy import SLURM_ROOT, AccountSpec, QosSpec, UserSpec

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The managed objects as read in one pass, by name."""

    queues: dict[str, Obj]
    classes: dict[str, Obj]
    users: dict[str, Obj]

    def kind(self, kind: str) -> dict[str, Obj]:
        return {k: q for k, q in self.queues.items() if _label(q, n.KIND_LABEL) == kind}


def _label(o: Obj, key: str) -> str:
    return str(((o.get("metadata") or {}).get("labels") or {}).get(key, ""))


def _ann(o: Obj, key: str) -> str:
    return str(((o.get("metadata") or {}).get("annotations") or {}).get(key, ""))


def tiers_of(snap: Snapshot) -> dict[str, TierInfo]:
    out = {}
    for name, q in snap.kind("tier").items():
        rt = n.parse_go_duration(str(q.get("spec", {}).get("preemptMinRuntime", ""))) or 0
        out[name] = TierInfo(_label(q, n.ACCOUNT_LABEL), _label(q, n.QOS_LABEL), rt)
    return out


def account_of(q: Obj) -> AccountSpec:
    spec = q.get("spec") or {}
    weight = ((spec.get("resources") or {}).get("gpu") or {}).get("overQuotaWeight", 1)
    return AccountSpec(q["metadata"]["name"], spec.get("parentQueue") or SLURM_ROOT, int(weight))


def qos_of(pc: Obj) -> QosSpec:
    p = n.QOS_ANNOTATION_PREFIX
    return QosSpec(
        pc["metadata"]["name"],
        int(pc.get("value", 0)),
        tuple(x for x in _ann(pc, f"{p}preempt").split(",") if x),
        n.parse_go_duration(_ann(pc, f"{p}min-runtime")) or 0,
        float(_ann(pc, f"{p}usage-factor") or 1),
        _ann(pc, f"{p}preempt-mode") or "requeue",
    )


def user_of(cm: Obj) -> UserSpec:
    d = cm.get("data") or {}

    def split(key: str) -> tuple[str, ...]:
        return tuple(x for x in str(d.get(key, "")).split(",") if x)

    return UserSpec(
        d.get("user", ""),
        split("accounts"),
        d.get("default_account", ""),
        split("qos"),
        d.get("default_qos", ""),
    )


def foreign_fields(obj: Obj) -> list[str]:
    """``manager: field`` for every field under ``spec`` owned by a manager other than ours."""
    out = []
    for mf in (obj.get("metadata") or {}).get("managedFields") or []:
        if mf.get("manager") == n.FIELD_MANAGER:
            continue
        spec = (mf.get("fieldsV1") or {}).get("f:spec")
        for path in _leaves(spec, "spec") if spec else []:
            out.append(f"{mf.get('manager')}: {path}")
    return sorted(out)


def _leaves(tree: Obj, prefix: str) -> list[str]:
    kids = {k: v for k, v in tree.items() if k.startswith("f:")}
    if not kids:
        return [prefix]
    return [p for k, v in sorted(kids.items()) for p in _leaves(v or {}, f"{prefix}.{k[2:]}")]
