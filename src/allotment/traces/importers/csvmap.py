"""Any CSV with a header, given a column mapping (``--map submit=COL,work=COL,gpus=COL,...``).

Map keys (canonical field = CSV column name):

* required: ``submit``, ``gpus``, ``account``, and ``work`` or both ``start`` and ``end``;
* optional: ``id`` (default: the line number), ``user``, ``gpus_per_node``, ``gpu_type``,
  ``kind``, ``min_runtime``, ``resumable``, ``checkpoint_interval``, ``priority``, ``class``.

Timestamps (``submit``, ``start``, ``end``) are seconds or ISO date-times; durations (``work``,
``min_runtime``, ``checkpoint_interval``) are seconds, ``[D-]HH:MM:SS`` or ``2h``-style.
Rows whose gpus is 0 are skipped (counted).  An empty optional cell means "unknown".
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allotment.core.jobs import JOB_KINDS
from allotment.errors import UsageError
from allotment.traces.bounds import duration_problem, gpus_problem, priority_problem
from allotment.traces.importers.base import ImportContext, RawJob
from allotment.traces.importers.fields import (
    parse_elapsed,
    parse_int,
    parse_timestamp,
)
from allotment.traces.source import open_text

MAP_KEYS = (
    "id",
    "submit",
    "start",
    "end",
    "work",
    "gpus",
    "gpus_per_node",
    "account",
    "user",
    "gpu_type",
    "kind",
    "min_runtime",
    "resumable",
    "checkpoint_interval",
    "priority",
    "class",
)


def parse_map(text: str | list[str]) -> dict[str, str]:
    """``submit=COL,work=COL`` (also repeatable) -> {field: column}; one-line usage errors."""
    parts = [p for chunk in ([text] if isinstance(text, str) else text) for p in chunk.split(",")]
    out: dict[str, str] = {}
    for part in parts:
        if not part.strip():
            continue
        key, sep, col = part.partition("=")
        key, col = key.strip(), col.strip()
        if not sep or not col:
            raise UsageError(f"--map expects FIELD=COLUMN, got {part!r}")
        if key not in MAP_KEYS:
            raise UsageError(f"--map: unknown field {key!r}; known: {', '.join(MAP_KEYS)}")
        if key in out:
            raise UsageError(f"--map: field {key!r} mapped twice")
        out[key] = col
    missing = [k for k in ("submit", "gpus", "account") if k not in out]
    if "work" not in out and not {"start", "end"} <= set(out):
        missing.append("work (or start and end)")
    if missing:
        raise UsageError(f"--map lacks {', '.join(missing)}")
    return out


def _bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "yes", "1", "y"):
        return True
    if t in ("false", "no", "0", "n"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _kind(text: str) -> str:
    if text not in JOB_KINDS:
        raise ValueError(f"kind must be one of {', '.join(JOB_KINDS)}, got {text!r}")
    return text


def _positive_int(what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        v = parse_int(text, what)
        if v < 0:
            raise ValueError(f"{what} must not be negative, got {v}")
        return v

    return parse


_PARSERS: dict[str, Callable[[str], Any]] = {
    "submit": lambda t: parse_timestamp(t, "submit"),
    "start": lambda t: parse_timestamp(t, "start"),
    "end": lambda t: parse_timestamp(t, "end"),
    "work": lambda t: parse_elapsed(t, "work"),
    "gpus": _positive_int("gpus"),
    "gpus_per_node": _positive_int("gpus_per_node"),
    "min_runtime": lambda t: parse_elapsed(t, "min_runtime"),
    "checkpoint_interval": lambda t: parse_elapsed(t, "checkpoint_interval"),
    "resumable": _bool,
    "kind": _kind,
    "priority": lambda t: parse_int(t, "priority"),
}


def _value_problem(key: str, value: Any) -> str | None:
    if key == "priority":
        return priority_problem(key, value)
    return duration_problem(key, value, positive=key == "checkpoint_interval")


@dataclass(frozen=True, slots=True)
class CsvImporter:
    mapping: Mapping[str, str] = field(default_factory=dict)
    delimiter: str = ","
    name: str = "csv"

    def read(self, path: Path, ctx: ImportContext) -> Iterator[RawJob]:
        with open_text(path, ctx.diags) as fh:
            reader = csv.reader(fh, delimiter=self.delimiter)
            header = next(reader, None)
            if header is None:
                ctx.diags.add(1, 1, "empty CSV: expected a header line")
                return
            index = {name.strip(): i for i, name in enumerate(header)}
            absent = [c for c in self.mapping.values() if c not in index]
            if absent:
                ctx.diags.add(
                    1, 1, f"--map names columns not in the header: {', '.join(sorted(set(absent)))}"
                )
                return
            cols = {key: index[c] for key, c in self.mapping.items()}
            absolute: bool | None = None
            for row in reader:
                if not any(c.strip() for c in row):
                    continue
                ctx.records += 1
                job = self._job(reader.line_num, row, cols, len(header), ctx)
                if absolute is None and job is not None:
                    # ISO submit times are absolute: time 0 is then the Unix epoch
                    absolute = not _is_number(row[cols["submit"]])
                    ctx.start_iso = "1970-01-01T00:00:00+00:00" if absolute else None
                if job is not None:
                    yield job

    def _job(
        self, number: int, row: list[str], cols: dict[str, int], width: int, ctx: ImportContext
    ) -> RawJob | None:
        if len(row) != width:
            ctx.diags.add(number, 1, f"expected {width} columns like the header, got {len(row)}")
            return None
        values: dict[str, Any] = {}
        ok = True
        for key, i in cols.items():
            text = row[i].strip()
            if not text:
                if key in ("submit", "gpus", "account") or (key == "work" and "start" not in cols):
                    ctx.diags.add(
                        number, _col(row, i), f"{key} (column {self.mapping[key]!r}) is empty"
                    )
                    ok = False
                continue
            parse = _PARSERS.get(key)
            try:
                values[key] = parse(text) if parse else text
            except ValueError as exc:
                ctx.diags.add(number, _col(row, i), f"column {self.mapping[key]!r}: {exc}")
                ok = False
        if not ok:
            return None
        if "work" in values:
            work = float(values["work"])
        elif "start" in values and "end" in values:
            work = float(values["end"]) - float(values["start"])
        else:
            ctx.skip("no run time (start or end empty)")
            return None
        if values["gpus"] == 0:
            ctx.skip("no GPUs")
            return None
        if work == 0:
            ctx.skip("zero run time")
            return None
        work_key = "work" if "work" in cols else "end"
        problem = duration_problem("run time", work)
        bad = ctx.refuse(number, problem, lambda: _col(row, cols[work_key]))
        problem = gpus_problem("gpus", values["gpus"])
        bad |= ctx.refuse(number, problem, lambda: _col(row, cols["gpus"]))
        for key in ("min_runtime", "checkpoint_interval", "priority"):
            if key in values:
                problem = _value_problem(key, values[key])
                bad |= ctx.refuse(number, problem, lambda k=key: _col(row, cols[k]))  # type: ignore[misc]
        if bad:
            return None
        gpn = values.get("gpus_per_node")
        if gpn is not None and (gpn == 0 or values["gpus"] % gpn):
            ctx.diags.add(
                number,
                _col(row, cols["gpus_per_node"]),
                f"gpus_per_node {gpn} does not divide gpus {values['gpus']}",
            )
            return None
        return RawJob(
            submit=float(values["submit"]),
            id=values.get("id", str(number)),
            account=values["account"],
            gpus=values["gpus"],
            work=work,
            user=values.get("user", ""),
            gpus_per_node=gpn,
            gpu_type=values.get("gpu_type"),
            klass=values.get("class"),
            kind=values.get("kind"),
            min_runtime=values.get("min_runtime"),
            resumable=values.get("resumable"),
            checkpoint_interval=values.get("checkpoint_interval"),
            priority=values.get("priority", 0),
            line=number,
        )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _col(row: list[str], i: int) -> int:
    """Character column of cell ``i`` (exact for unquoted cells)."""
    return 1 + sum(len(c) + 1 for c in row[:i])
