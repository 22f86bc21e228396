"""JSON Schemas of every file kind, generated from the pydantic models.

The shipped copies in ``allotment/schemas/<kind>.schema.json`` are what editors use (``allot schema
KIND``); a test fails when they differ from what the models generate (``make regen`` rewrites them).
"""

from __future__ import annotations

import json
from typing import Any

from allotment.config.kinds import KINDS

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
TITLES = {
    "budget": "allotment budget node (budgets/<org>/.../<node>/budget.yaml)",
    "gpu-types": "allotment GPU types (inventory/gpu_types.yaml)",
    "cluster": "allotment cluster (inventory/clusters/<cluster>.yaml)",
    "scheduler": "allotment scheduler policy (policies/scheduler.yaml)",
    "boosts": "allotment manual boosts (policies/boosts.yaml)",
}


def _close_pattern_maps(node: Any) -> None:
    """pydantic renders ``dict[Name, X]`` as ``patternProperties`` but leaves other keys allowed;
    the models refuse them, so the schema must too."""
    if isinstance(node, dict):
        if "patternProperties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _close_pattern_maps(value)
    elif isinstance(node, list):
        for value in node:
            _close_pattern_maps(value)


def json_schema(kind: str) -> dict[str, Any]:
    schema = KINDS[kind].model_json_schema(mode="validation")
    _close_pattern_maps(schema)
    schema["$schema"] = SCHEMA_DRAFT
    schema["title"] = TITLES[kind]
    return schema


def schema_text(kind: str) -> str:
    return json.dumps(json_schema(kind), indent=2, sort_keys=True) + "\n"


def schema_file_name(kind: str) -> str:
    return f"{kind}.schema.json"
