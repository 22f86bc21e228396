"""Render the field tables of docs/config-reference.md from the shipped JSON Schemas."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from allotment.config.kinds import KINDS
from allotment.config.schemas import schema_file_name

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "allotment" / "schemas"
BEGIN = "<!-- BEGIN GENERATED FIELDS: {kind} -->"
END = "<!-- END GENERATED FIELDS: {kind} -->"


def _type(s: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in s:
        return "mapping"
    if "anyOf" in s:
        parts = [_type(x, defs) for x in s["anyOf"] if x.get("type") != "null"]
        return " or ".join(parts) + " (optional)"
    if "oneOf" in s:  # a value read by its shape (a tagged union)
        return " or ".join(_type(x, defs) for x in s["oneOf"])
    t = s.get("type")
    if t == "array":
        return f"list of {_type(s.get('items', {}), defs)}"
    if t == "object":
        values = list(s.get("patternProperties", {}).values()) or [s.get("additionalProperties")]
        return f"mapping NAME -> {_type(values[0] or {}, defs)}"
    if "enum" in s:
        return "one of " + ", ".join(f"`{v}`" for v in s["enum"])
    fmt = {"date": "date YYYY-MM-DD", "date-time": "date-time with zone"}.get(s.get("format", ""))
    if fmt:
        return fmt
    if "pattern" in s and t == "string":
        return "duration" if "smhdw" in s["pattern"] else "string (pattern)"
    bounds = [
        f"{op} {s[k]}"
        for k, op in (("exclusiveMinimum", ">"), ("minimum", ">="), ("maximum", "<="))
        if k in s
    ]
    return {"number": "number", "integer": "integer", "string": "string", "boolean": "boolean"}.get(
        str(t), str(t)
    ) + (f" ({', '.join(bounds)})" if bounds else "")


def _target(s: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema a field leads into (through Optional, lists and maps), if any."""
    for x in s.get("anyOf", [s]):
        if "$ref" in x:
            return defs[x["$ref"].rsplit("/", 1)[1]]  # type: ignore[no-any-return]
        pattern_values = list(x.get("patternProperties", {}).values())
        for inner in [x.get("items"), *pattern_values]:
            if isinstance(inner, dict) and "$ref" in inner:
                return defs[inner["$ref"].rsplit("/", 1)[1]]  # type: ignore[no-any-return]
    return None


def _rows(obj: dict[str, Any], defs: dict[str, Any], prefix: str, out: list[str]) -> None:
    required = set(obj.get("required", []))
    for name, s in sorted(obj.get("properties", {}).items()):
        t = _type(s, defs)
        path = f"{prefix}{name}"
        desc = (s.get("description") or "").replace("|", "\\|")
        out.append(f"| `{path}` | {t} | {'yes' if name in required else ''} | {desc} |")
        inner = _target(s, defs)
        if inner is not None:
            sep = "[]." if "list" in t else (".NAME." if "mapping NAME" in t else ".")
            _rows(inner, defs, path + sep, out)


def fields_table(kind: str) -> str:
    schema = json.loads((SCHEMAS / schema_file_name(kind)).read_text(encoding="utf-8"))
    out = ["| field | type | required | meaning |", "|---|---|---|---|"]
    _rows(schema, schema.get("$defs", {}), "", out)
    return "\n".join(out)


def regenerate(doc: str) -> str:
    for kind in sorted(KINDS):
        begin, end = BEGIN.format(kind=kind), END.format(kind=kind)
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        if not pattern.search(doc):
            raise AssertionError(f"docs/config-reference.md lacks the markers for {kind}")
        doc = pattern.sub(lambda _m, k=kind, b=begin, e=end: f"{b}\n{fields_table(k)}\n{e}", doc)
    return doc
