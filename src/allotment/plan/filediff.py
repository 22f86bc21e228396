"""Field-by-field diff of every config file, derived from the pydantic models themselves.

The structural diff in ``diff`` speaks budget (shares, moves, renames) and is computed on the
compiled trees; this one is the safety net under it.  Each file whose bytes differ is read into
its model (``config.kinds``) on both sides and the two ``model_dump``s are compared leaf by leaf,
so every field of every file kind is diffed, including fields added to a model later: nobody
has to remember to list them (issue 14, item 1: a PR changing only ``health_command`` once read
"nothing changes").

Values are shown as written in the file (``7d``, not ``604800``).  The only fields hidden from
the field table are those the budget diff already shows in budget words (``NODE_DIFF_FIELDS``);
the test suite checks that every other model field is reachable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from allotment.config.kinds import kind_of, read_model

# Budget-file fields shown by the budget-tree diff (kind "budget"; ``*`` is a child's name).
NODE_DIFF_FIELDS = frozenset(
    {
        "owners",
        "members",
        "children.*",  # a child added or removed
        "children.*.share",
        "children.*.clusters",
        "children.*.start",
        "children.*.end",
        "children.*.max_gpus",
    }
)
UNSET = "(unset)"


@dataclass(frozen=True, slots=True, order=True)
class FieldChange:
    """One leaf value of one file that differs; ``field`` is a dotted path in the document."""

    file: str
    kind: str  # a key of config.kinds.KINDS
    field: str
    before: str
    after: str

    @property
    def platform(self) -> bool:
        """Inventory and policy files belong to the platform team."""
        return self.kind != "budget"

    @property
    def pattern(self) -> str:
        """``field`` with the child's name replaced by ``*`` (for NODE_DIFF_FIELDS)."""
        parts = self.field.split(".")
        if self.kind == "budget" and len(parts) >= 2 and parts[0] == "children":
            parts[1] = "*"
        return ".".join(parts)

    @property
    def node_file_owner(self) -> str | None:
        """The budget node whose owners own this file (the folder's name)."""
        if self.kind != "budget":
            return None
        return self.file.rsplit("/", 2)[-2]


def _fmt(value: Any) -> str:
    if value is None:
        return UNSET
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(_fmt(v) for v in value) if value else "(none)"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(", ", ": "))
    return str(value)


def _label(item: Any, index: int) -> str:
    """A list item's label: its ``name`` when it has one (node groups), else its index."""
    if isinstance(item, Mapping) and isinstance(item.get("name"), str):
        return f"[{item['name']}]"
    return f"[{index}]"


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of a dumped model; lists of scalars are one leaf, lists of mappings are walked."""
    if isinstance(value, Mapping):
        if not value and prefix:
            yield prefix, value
        for k in sorted(value):
            yield from flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
        for i, item in enumerate(value):
            yield from flatten(item, f"{prefix}{_label(item, i)}")
    else:
        yield prefix, value


def _dump(path: str, data: bytes | None) -> tuple[str | None, dict[str, Any] | None]:
    kind = kind_of(path)
    if data is None or kind is None:
        return kind, None
    model, _, diags = read_model(path, data, kind)
    if model is None or diags:
        return kind, None
    dumped: dict[str, Any] = model.model_dump(mode="json")
    return kind, dumped


def _children_added_or_removed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    b = before.get("children") or {}
    a = after.get("children") or {}
    return [f"children.{k}" for k in sorted(set(a) ^ set(b))]


def file_changes(
    base: Mapping[str, bytes], head: Mapping[str, bytes]
) -> tuple[FieldChange, ...]:
    """Every differing leaf of every config file present on both sides, or added or removed
    (inventory and policy files; a budget file added or removed is a node the budget diff
    shows).  Files that do not parse are skipped: validation reports them."""
    out: list[FieldChange] = []
    for path in sorted(set(base) | set(head)):
        old, new = base.get(path), head.get(path)
        if old == new:
            continue
        kind, before = _dump(path, old)
        _, after = _dump(path, new)
        if kind is None or (kind == "budget" and (before is None or after is None)):
            continue
        fb = dict(flatten(before or {}))
        fa = dict(flatten(after or {}))
        added = set(_children_added_or_removed(before, after)) if before and after else set()
        for field in sorted(set(fb) | set(fa)):
            if fb.get(field) == fa.get(field):
                continue
            if any(field == a or field.startswith(a + ".") for a in added):
                field_shown = field.split(".")[0] + "." + field.split(".")[1]
                ch = FieldChange(path, kind, field_shown, "", "")
            else:
                ch = FieldChange(path, kind, field, _fmt(fb.get(field)), _fmt(fa.get(field)))
            if ch not in out:
                out.append(ch)
    return tuple(sorted(out))


def shown(changes: tuple[FieldChange, ...]) -> tuple[FieldChange, ...]:
    """The changes the budget-tree diff does not already say in budget words."""
    return tuple(c for c in changes if not (c.kind == "budget" and c.pattern in NODE_DIFF_FIELDS))
