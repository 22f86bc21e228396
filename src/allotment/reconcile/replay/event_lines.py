"""Reading an event log back (``allot replay --from-events FILE``): every line checked, every
problem reported at once as ``file:line:col: what is wrong``, exit 2.

The file is the user's: it may be a replay's own log, one edited by hand or one cut from a
longer run.  A bad line must not end in a traceback, and a time the fidelity table cannot place
(negative, not finite, beyond the trace bound) must not be counted in the wrong window: a negative
``t`` would index the per-window lists from their end.  Keys this version does not know (the
simulator's ``at`` on ``reserve``, say) are ignored, so a newer log still reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from allotment.traces.diagnostics import DiagnosticCollector, TooManyErrors
from allotment.traces.line_checker import DECODER, DuplicateKey, LineChecker, col_of, kind_of
from allotment.traces.source import numbered_lines

KINDS = ("submit", "start", "preempt", "end", "reject", "reserve", "release", "drain", "resume")
_TEXT = ("job", "account", "by", "rule", "reason", "node", "kind")
_COUNTS = ("gpus", "nodes")
_HOURS = ("lost_gpu_hours", "charged_gpu_hours")


def parse_lines(path: Path, make: Callable[..., Any]) -> list[Any]:
    """Every event line of ``path`` made into ``make(**fields)``, or TraceDiagnostics listing
    every bad line (up to the collector's cap)."""
    return [x for _, x in parse_numbered(path, make)]


def parse_numbered(path: Path, make: Callable[..., Any]) -> list[tuple[int, Any]]:
    """``parse_lines`` with each event's line number, for checks across lines."""
    diags = DiagnosticCollector(str(path))
    out: list[tuple[int, Any]] = []
    stopped = False
    try:
        for number, raw in numbered_lines(path, diags):
            if raw.strip():
                fields = _fields(raw, number, diags)
                if fields is not None:
                    out.append((number, make(**fields)))
    except TooManyErrors:
        stopped = True
    diags.raise_if_any(stopped_early=stopped)
    return out


def _fields(raw: str, number: int, diags: DiagnosticCollector) -> dict[str, Any] | None:
    try:
        d = DECODER.decode(raw)
    except DuplicateKey as exc:
        diags.add(number, col_of(raw, exc.key, 2), f"key {exc.key!r} appears twice")
        return None
    except json.JSONDecodeError as exc:
        diags.add(number, exc.colno, f"not valid JSON: {exc.msg}")
        return None
    except (ValueError, RecursionError) as exc:
        diags.add(number, 1, f"not valid JSON: {exc}")
        return None
    if not isinstance(d, dict):
        diags.add(number, 1, "each line must be a JSON object")
        return None
    c = LineChecker(raw, number, diags)
    fields = _checked(c, d)
    return fields if c.ok else None


def _checked(c: LineChecker, d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, what in (("t", "the event's time"), ("event", "the event's kind")):
        if key not in d:
            c.err(None, f"missing {key!r} ({what})")
    if "t" in d:
        out["t"] = c.time(d, "t")  # a number, finite, 0 or more, within the trace bound
    for key in ("decided", "placed"):
        if d.get(key) is not None:
            out[key] = c.time(d, key)
    if "event" in d:
        if d["event"] in KINDS:
            out["event"] = d["event"]
        else:
            c.err("event", f"event must be one of {', '.join(KINDS)}, got {kind_of(d['event'])}")
    for key in _TEXT:
        if d.get(key) is not None:
            out[key] = c.string(d, key)
    for key in _COUNTS:
        if d.get(key) is not None:
            v = c.integer(d, key)
            if v is not None and v < 0:
                c.err(key, f"{key} must be 0 or more, got {v}")
            out[key] = v
    if d.get("allocated") is not None:
        if isinstance(d["allocated"], bool):
            out["allocated"] = d["allocated"]
        else:
            c.err("allocated", f"allocated must be true or false, got {kind_of(d['allocated'])}")
    for key in _HOURS:
        if d.get(key) is not None:
            out[key] = _hours(c, key, d[key])
    return out


def _hours(c: LineChecker, key: str, v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        c.err(key, f"{key} must be a finite number of 0 or more, got {kind_of(v)}")
        return None
    return float(v)
