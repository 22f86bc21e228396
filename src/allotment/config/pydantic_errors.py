"""Pydantic validation errors, turned into ``file:line:col: message`` through the source map.

Pydantic reports a ``loc`` (a document path); the source map gives its position.  Unknown keys are
reported at the key with a did-you-mean drawn from the fields the model accepts at that place.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from allotment.config.models.policy import POOL_TAGS
from allotment.config.sourcemap import DocPath, SourceMap
from allotment.errors import Diagnostic

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    type(None): "null",
    list: "a list",
    dict: "a mapping",
}


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated down to the type that holds the next level."""
    while True:
        origin = get_origin(annotation)
        if origin is typing.Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _model_at(model: type[BaseModel], loc: DocPath) -> type[BaseModel] | None:
    """The model class that holds the mapping at ``loc`` (None when it is not a model)."""
    current: Any = model
    i = 0
    while i < len(loc):
        current = _unwrap(current)
        origin = get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(loc[i]))
            if field is None:
                return None
            current = field.annotation
        elif origin in (list, dict):
            current = get_args(current)[-1]
        else:
            return None
        i += 1
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _where(loc: DocPath) -> str:
    return ".".join(str(p) for p in loc) if loc else "document"


def _got(value: Any) -> str:
    for t, name in _TYPE_NAMES.items():
        if type(value) is t:
            return f"{name} ({value!r})" if t not in (list, dict) else name
    return type(value).__name__


def _message(model: type[BaseModel], err: ErrorDetails) -> str:
    loc: DocPath = tuple(err["loc"])
    kind = err["type"]
    ctx = err.get("ctx", {})
    value = err.get("input")
    where = _where(loc)
    if kind == "extra_forbidden":
        key = str(loc[-1])
        holder = _model_at(model, loc[:-1])
        allowed = sorted(holder.model_fields) if holder else []
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        known = f" (allowed: {', '.join(allowed)})" if allowed and not close else ""
        return f"unknown key '{key}'{hint}{known}"
    if kind == "missing":
        return f"{where}: required key is missing"
    if loc and loc[-1] == "[key]":
        return f"{_where(loc[:-2])}: key {value!r} is not {_pattern_name(loc[:-2])}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {
            "greater_than": ">",
            "greater_than_equal": ">=",
            "less_than": "<",
            "less_than_equal": "<=",
        }[kind]
        bound = next(iter(ctx.values()))
        return f"{where}: must be {op} {bound:g}, got {value!r}"
    if kind == "string_pattern_mismatch":
        return f"{where}: {value!r} is not {_pattern_name(loc)}"
    if kind == "value_error":
        return f"{where}: {ctx.get('error', err['msg'])}"
    if kind == "literal_error":
        return f"{where}: must be one of {ctx.get('expected')}, got {value!r}"
    if kind == "timezone_aware":
        return f"{where}: give a time zone, e.g. 2026-12-01T08:00:00Z"
    if kind in ("too_short", "too_long"):
        return f"{where}: {err['msg'][0].lower()}{err['msg'][1:]}"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        expected = kind.split("_")[0]
        names = {
            "string": "a string",
            "int": "an integer",
            "float": "a number",
            "bool": "true or false",
            "list": "a list",
            "dict": "a mapping",
            "model": "a mapping",
            "date": "a date (YYYY-MM-DD)",
            "datetime": "a date-time (2026-12-01T08:00:00Z)",
        }
        return f"{where}: expected {names.get(expected, expected)}, got {_got(value)}"
    return f"{where}: {err['msg'][0].lower()}{err['msg'][1:]}"


def _pattern_name(loc: DocPath) -> str:
    names = {
        "owners": "an e-mail address or @github-handle",
        "platform_team": "an e-mail address or @github-handle",
        "approver": "an e-mail address or @github-handle",
        "members": "a valid user name (lowercase)",
        "default_for": "a valid user name (lowercase)",
        "target": "a boost target like job:ID, user:NAME or account:NAME",
        "restore_hook": "a command name (letters, digits, '.', '-' and '_'; no path, no arguments)",
    }
    for part in reversed(loc):
        if isinstance(part, str) and part in names:
            return names[part]
    return "a valid name (lowercase letters, digits, - and _, starting with a letter)"


# the tags of tagged unions, which pydantic puts in an error's location: not keys of the document
UNION_TAGS = frozenset(POOL_TAGS)


def validation_diagnostics(
    model: type[BaseModel], exc: ValidationError, smap: SourceMap
) -> list[Diagnostic]:
    out = []
    for err in exc.errors(include_url=False):
        loc: DocPath = tuple(p for p in err["loc"] if p not in UNION_TAGS)
        err["loc"] = loc
        kind = err["type"]
        if kind == "extra_forbidden":
            line, col = smap.key(loc)
        elif kind == "missing":
            line, col = smap.key(loc[:-1]) if loc[:-1] else (1, 1)
        elif len(loc) >= 1 and isinstance(loc[-1], str) and loc not in smap.values:
            line, col = smap.key(loc[:-1]) if loc[:-1] in smap.keys else smap.value(loc)
        else:
            line, col = smap.value(loc)
        out.append(Diagnostic(smap.file, line, col, _message(model, err)))
    return out
