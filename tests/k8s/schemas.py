"""Validate manifests against the shipped CRD JSON Schemas (``../shared/k8s-crds`` beside the
repository, or ``$ALLOTMENT_SHARED``), strictly.

The shipped schemas already refuse unknown fields (``additionalProperties: false``) everywhere
except ``metadata``, which the CRDs leave to the API server as ``type: object``; ``STRICT_META``
closes it to the fields allotment writes, so a typo there fails too.  ``PriorityClass`` and
``ConfigMap`` are core types with no CRD: their strict schemas are written here from the
Kubernetes API reference (scheduling.k8s.io/v1, core/v1).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    d = Path(os.environ.get("ALLOTMENT_SHARED", REPO.parent / "shared")) / "k8s-crds"
    if not d.is_dir():
        raise AssertionError(
            f"CRD schemas not found at {d}: the tests need shared/ beside the repository "
            "(or ALLOTMENT_SHARED pointing at it)"
        )
    return d


_LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
STRICT_META: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253},
        "namespace": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
        "labels": _LABELS,
        "annotations": _LABELS,
    },
}
_CORE: dict[tuple[str, str], dict[str, Any]] = {
    ("scheduling.k8s.io/v1", "PriorityClass"): {
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "metadata", "value"],
        "properties": {
            "apiVersion": {"const": "scheduling.k8s.io/v1"},
            "kind": {"const": "PriorityClass"},
            "metadata": {"type": "object"},
            "value": {"type": "integer", "maximum": 1_000_000_000},
            "globalDefault": {"type": "boolean"},
            "description": {"type": "string"},
            "preemptionPolicy": {"enum": ["Never", "PreemptLowerPriority"]},
        },
    },
    ("v1", "ConfigMap"): {
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": {"const": "v1"},
            "kind": {"const": "ConfigMap"},
            "metadata": {"type": "object"},
            "data": _LABELS,
        },
    },
}
_CRD_FILES = {
    ("scheduling.run.ai/v2", "Queue"): "kai-scheduler-v0.13.0/queue_v2.json",
    ("kai.scheduler/v1", "SchedulingShard"): "kai-scheduler-v0.13.0/schedulingshard_v1.json",
    ("scheduling.run.ai/v2alpha2", "PodGroup"): "kai-scheduler-v0.13.0/podgroup_v2alpha2.json",
}
for _kind in ("ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass"):
    _CRD_FILES[("kueue.x-k8s.io/v1beta2", _kind)] = f"kueue-v0.19.2/{_kind.lower()}_v1beta2.json"


@cache
def schema_for(api_version: str, kind: str) -> dict[str, Any]:
    key = (api_version, kind)
    if key in _CORE:
        return _CORE[key]
    if key not in _CRD_FILES:
        raise AssertionError(f"no schema for {api_version} {kind}")
    data: dict[str, Any] = json.loads((shared_dir() / _CRD_FILES[key]).read_text())
    return data


def errors(obj: dict[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` (empty when valid), as ``path: message``."""
    schema = schema_for(obj.get("apiVersion", ""), obj.get("kind", ""))
    out = []
    for s, doc in ((schema, obj), (STRICT_META, obj.get("metadata"))):
        v = jsonschema.Draft202012Validator(s)
        for e in sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.path))):
            out.append(f"{'/'.join(map(str, e.path)) or '.'}: {e.message}")
    return out
