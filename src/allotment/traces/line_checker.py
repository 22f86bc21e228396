"""One canonical trace line, decoded and checked key by key (each problem at its key's column).

Strict JSON: a key twice in one object and ``NaN``/``Infinity`` are errors, not last-one-wins
and not floats nobody can replay.  Numbers are checked against ``traces.bounds``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from allotment.traces.bounds import duration_problem, gpus_problem, time_problem
from allotment.traces.diagnostics import DiagnosticCollector


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number allowed in a trace")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


class DuplicateKey(Exception):
    """A key appears twice in one JSON object."""

    def __init__(self, key: str) -> None:
        self.key = key


DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_reject_constant)
# the C scanner under ``DECODER.decode`` (an attribute typeshed does not declare), and the same
# without the hooks, for lines checked before
_SCAN: Callable[[str, int], tuple[Any, int]] = vars(DECODER)["scan_once"]
_SCAN_PLAIN: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]
_WHITE = " \t\n\r"  # JSON's white space


def decode_line(raw: str) -> Any:
    """``DECODER.decode(raw)``: the same object, or the same exception (a key twice, NaN or
    Infinity, not JSON), by calling the C scanner under it directly.

    Why: every job line is decoded twice (the check, then the replay of ``trace_stream``), and
    ``decode`` reaches the scanner through two interpreted layers (``decode`` and
    ``raw_decode``) and a white-space regex on each side.  ``decode`` skips leading white space,
    scans, and refuses anything but white space after the value; a line without leading white
    space scans from 0 and only the trailing check is left.  Everything else (leading white
    space, a scan that fails, extra data) goes through ``decode`` itself, for its error."""
    obj = _whole(_SCAN, raw)
    return DECODER.decode(raw) if obj is _NOT_WHOLE else obj


def decode_again(raw: str) -> Any:
    """A line ``decode_line`` accepted before, read again (``trace_stream``'s replay): by the
    scanner without ``DECODER``'s hooks, which only refuse (a key twice, NaN or Infinity) and so
    change nothing in a line they let through; 2.2 us a Philly-shaped line against 3.0 us for
    ``json.loads``.  Whatever the scanner refuses (a changed file) goes through
    ``decode_line``, for its error."""
    obj = _whole(_SCAN_PLAIN, raw)
    return decode_line(raw) if obj is _NOT_WHOLE else obj


_NOT_WHOLE = object()  # ``_whole``'s "not a line the scanner alone decides"


def _whole(scan: Callable[[str, int], tuple[Any, int]], raw: str) -> Any:
    """What ``scan`` reads of ``raw`` when ``raw`` is one JSON value from its first character,
    with nothing but white space after it; else ``_NOT_WHOLE`` (leading white space, a scan
    that fails, extra data), for the caller's decoder to decide, with its error."""
    if raw and raw[0] not in _WHITE:
        try:
            obj, end = scan(raw, 0)
        except StopIteration:
            return _NOT_WHOLE
        if end == len(raw) or not raw[end:].strip(_WHITE):
            return obj
    return _NOT_WHOLE


def col_of(raw: str, key: str, nth: int = 1) -> int:
    """1-based column of the ``nth`` ``"key"`` in the raw line (1 when not found verbatim)."""
    needle = json.dumps(key)
    i = -1
    for _ in range(nth):
        i = raw.find(needle, i + 1)
        if i < 0:
            return 1
    return i + 1


class LineChecker:
    """Validates one decoded object, reporting each problem at its key's column."""

    def __init__(self, raw: str, line: int, diags: DiagnosticCollector) -> None:
        self.raw, self.line, self.diags, self.ok = raw, line, diags, True

    def err(self, key: str | None, message: str) -> None:
        self.ok = False
        self.diags.add(self.line, col_of(self.raw, key) if key else 1, message)

    def string(self, d: Mapping[str, Any], key: str, *, empty: bool = False) -> str | None:
        v = d[key]
        if not isinstance(v, str):
            self.err(key, f"{key} must be a string, got {kind_of(v)}")
            return None
        if not empty and not v.strip():
            self.err(key, f"{key} must not be empty")
            return None
        return v

    def _numeric(self, d: Mapping[str, Any], key: str) -> float | None:
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.err(key, f"{key} must be a number of seconds, got {kind_of(v)}")
            return None
        if not math.isfinite(v):
            self.err(key, f"{key} must be a finite number, got {v}")
            return None
        return float(v)

    def time(self, d: Mapping[str, Any], key: str) -> float | None:
        """A time after trace start, inside the documented bound (``bounds``)."""
        v = self._numeric(d, key)
        return None if v is None else self._bounded(key, v, time_problem(key, v))

    def duration(self, d: Mapping[str, Any], key: str, *, positive: bool = False) -> float | None:
        v = self._numeric(d, key)
        if v is None:
            return None
        return self._bounded(key, v, duration_problem(key, v, positive=positive))

    def _bounded(self, key: str, v: float, problem: str | None) -> float | None:
        if problem is not None:
            self.err(key, problem)
            return None
        return v

    def integer(self, d: Mapping[str, Any], key: str) -> int | None:
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, int):
            self.err(key, f"{key} must be an integer, got {kind_of(v)}")
            return None
        return v

    def gpus(self, d: Mapping[str, Any], key: str) -> int | None:
        v = self.integer(d, key)
        if v is None:
            return None
        problem = gpus_problem(key, v)
        if problem is not None:
            self.err(key, problem)
            return None
        return v

    def unknown(self, d: Mapping[str, Any], allowed: Iterable[str], what: str) -> None:
        allowed_set = set(allowed)
        for key in d:
            if key not in allowed_set:
                self.err(key, f"unknown key {key!r} in a {what} line")


def kind_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, list):
        return "a list"
    return "an object"
