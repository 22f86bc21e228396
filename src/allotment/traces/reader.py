"""Reading canonical traces: streaming, every problem reported at its line and key's column.

Well-formed job lines take a straight-line fast path; anything unusual goes through the full
checker, which explains what is wrong (a property test keeps the two in agreement).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from allotment.core.jobs import JOB_KINDS, JobSpec, NodeEvent
from allotment.traces.bounds import (
    MAX_DURATION_S,
    MAX_GPUS,
    MAX_TIME_S,
    duration_ok,
    duration_problem,
    gpus_ok,
    gpus_problem,
    priority_problem,
    time_ok,
    time_problem,
)
from allotment.traces.diagnostics import DiagnosticCollector, TooManyErrors
from allotment.traces.format import (
    FORMAT_VERSION,
    HEADER_FIELDS,
    JOB_FIELDS,
    NODE_FIELDS,
    NODE_STATES,
    REQUIRED_JOB_FIELDS,
    Trace,
    TraceItem,
    item_time,
)
from allotment.traces.idcheck import IdIndex
from allotment.traces.job_fit import JobFit
from allotment.traces.source import numbered_lines


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number allowed in a trace")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_reject_constant)


def _col(raw: str, key: str, nth: int = 1) -> int:
    """1-based column of the ``nth`` ``"key"`` in the raw line (1 when not found verbatim)."""
    needle = json.dumps(key)
    i = -1
    for _ in range(nth):
        i = raw.find(needle, i + 1)
        if i < 0:
            return 1
    return i + 1


class _LineChecker:
    """Validates one decoded object, reporting each problem at its key's column."""

    def __init__(self, raw: str, line: int, diags: DiagnosticCollector) -> None:
        self.raw, self.line, self.diags, self.ok = raw, line, diags, True

    def err(self, key: str | None, message: str) -> None:
        self.ok = False
        self.diags.add(self.line, _col(self.raw, key) if key else 1, message)

    def string(self, d: Mapping[str, Any], key: str, *, empty: bool = False) -> str | None:
        v = d[key]
        if not isinstance(v, str):
            self.err(key, f"{key} must be a string, got {_kind(v)}")
            return None
        if not empty and not v.strip():
            self.err(key, f"{key} must not be empty")
            return None
        return v

    def _numeric(self, d: Mapping[str, Any], key: str) -> float | None:
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.err(key, f"{key} must be a number of seconds, got {_kind(v)}")
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
            self.err(key, f"{key} must be an integer, got {_kind(v)}")
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


def _kind(v: Any) -> str:
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


def _optional(d: Mapping[str, Any], key: str) -> bool:
    return d.get(key) is not None


_JOB_KEYS = frozenset(("type", *JOB_FIELDS))
_KINDS = frozenset(JOB_KINDS)


def _or(value: Any, default: Any) -> Any:
    """null means absent, as in the full checker."""
    return default if value is None else value


def _fast_job(d: dict[str, Any]) -> JobSpec | None:
    """The common case in straight-line code: a well-formed job line.  Returns None on anything
    unusual, and the full checker (which explains what is wrong) runs instead."""
    if not _JOB_KEYS.issuperset(d) or d.get("type", "job") != "job":
        return None
    job_id, account, gpus = d.get("id"), d.get("account"), d.get("gpus")
    submit: Any = d.get("submit")
    work: Any = d.get("work")
    if not (type(job_id) is str and job_id.strip() and type(account) is str and account.strip()):
        return None
    # the bounds of ``traces.bounds`` inlined for the three fields every line has
    if not (
        (type(submit) is int or type(submit) is float)
        and 0 <= submit <= MAX_TIME_S
        and (type(work) is int or type(work) is float)
        and 0 < work <= MAX_DURATION_S
        and type(gpus) is int
        and 1 <= gpus <= MAX_GPUS
    ):
        return None
    user = _or(d.get("user"), "")
    gpn = d.get("gpus_per_node")
    min_rt = d.get("min_runtime")
    resumable = _or(d.get("resumable"), True)
    ckpt = d.get("checkpoint_interval")
    priority = _or(d.get("priority"), 0)
    kind = _or(d.get("kind"), "batch")
    deadline = d.get("deadline")
    gpu_type = d.get("gpu_type")
    if (
        type(user) is not str
        or (gpn is not None and (not gpus_ok(gpn) or gpus % gpn))
        or (min_rt is not None and not duration_ok(min_rt))
        or type(resumable) is not bool
        or (ckpt is not None and not duration_ok(ckpt, positive=True))
        or type(priority) is not int
        or priority_problem("priority", priority) is not None
        or type(kind) is not str
        or kind not in _KINDS
        or (deadline is not None and not (time_ok(deadline) and deadline >= submit))
        or d.get("depends_on")
        or (gpu_type is not None and not (type(gpu_type) is str and gpu_type.strip()))
    ):
        return None
    return JobSpec(
        id=job_id,
        submit=float(submit),
        account=account,
        gpus=gpus,
        work=float(work),
        user=user,
        gpus_per_node=gpn,
        min_runtime=None if min_rt is None else float(min_rt),
        resumable=resumable,
        checkpoint_interval=None if ckpt is None else float(ckpt),
        priority=priority,
        kind=kind,
        deadline=None if deadline is None else float(deadline),
        gpu_type=gpu_type,
    )


def _parse_job(
    c: _LineChecker, d: dict[str, Any], ids: IdIndex, fit: JobFit | None
) -> JobSpec | None:
    job = _fast_job(d) or _checked_job(c, d)
    if job is None:
        return None
    ids.add(job.id, c.line)
    for dep in job.depends_on:
        ids.depend(job.id, dep, c.line, _col(c.raw, "depends_on"))
    if fit is not None:
        for p in fit.problems(job):
            c.err(p.key, p.message)
    return job if c.ok else None


def _checked_job(c: _LineChecker, d: dict[str, Any]) -> JobSpec | None:
    """Every check, each failure reported at its key's column."""
    c.unknown(d, ("type", *JOB_FIELDS), "job")
    if "type" in d and d["type"] != "job":
        c.err("type", f"type must be 'job', 'node' or 'header', got {d['type']!r}")
    for key in JOB_FIELDS:
        if key in REQUIRED_JOB_FIELDS and d.get(key) is None:
            c.err(None, f"job line is missing required key {key!r}")
    if not c.ok:
        return None
    job_id = c.string(d, "id")
    submit = c.time(d, "submit")
    account = c.string(d, "account")
    gpus = c.gpus(d, "gpus")
    work = c.duration(d, "work", positive=True)
    user = c.string(d, "user", empty=True) if _optional(d, "user") else ""
    gpn = c.gpus(d, "gpus_per_node") if _optional(d, "gpus_per_node") else None
    if gpn is not None and gpus is not None and gpus % gpn:
        c.err("gpus_per_node", f"gpus_per_node {gpn} does not divide gpus {gpus}")
    min_rt = c.duration(d, "min_runtime") if _optional(d, "min_runtime") else None
    resumable = True
    if _optional(d, "resumable"):
        if isinstance(d["resumable"], bool):
            resumable = d["resumable"]
        else:
            c.err("resumable", f"resumable must be true or false, got {_kind(d['resumable'])}")
    ckpt = (
        c.duration(d, "checkpoint_interval", positive=True)
        if _optional(d, "checkpoint_interval")
        else None
    )
    priority = c.integer(d, "priority") if _optional(d, "priority") else 0
    if priority is not None and (problem := priority_problem("priority", priority)):
        c.err("priority", problem)
    kind = "batch"
    if _optional(d, "kind"):
        k = d["kind"]
        if k in JOB_KINDS:
            kind = k
        else:
            c.err("kind", f"kind must be one of {', '.join(JOB_KINDS)}, got {_kind(k)}")
    deadline = c.time(d, "deadline") if _optional(d, "deadline") else None
    if deadline is not None and submit is not None and deadline < submit:
        c.err("deadline", f"deadline {deadline:g} is before submit {submit:g}")
    deps: tuple[str, ...] = ()
    if _optional(d, "depends_on"):
        v = d["depends_on"]
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            c.err("depends_on", "depends_on must be a list of job ids (strings)")
        elif len(set(v)) != len(v):
            c.err("depends_on", "depends_on names a job twice")
        elif job_id is not None and job_id in v:
            c.err("depends_on", "a job cannot depend on itself")
        else:
            deps = tuple(v)
    gpu_type = c.string(d, "gpu_type") if _optional(d, "gpu_type") else None
    if not c.ok:
        return None
    assert job_id is not None and submit is not None and account is not None
    assert gpus is not None and work is not None and user is not None and priority is not None
    return JobSpec(
        id=job_id,
        submit=submit,
        account=account,
        gpus=gpus,
        work=work,
        user=user,
        gpus_per_node=gpn,
        min_runtime=min_rt,
        resumable=resumable,
        checkpoint_interval=ckpt,
        priority=priority,
        kind=kind,
        deadline=deadline,
        depends_on=deps,
        gpu_type=gpu_type,
    )


def _parse_node(c: _LineChecker, d: dict[str, Any]) -> NodeEvent | None:
    c.unknown(d, NODE_FIELDS, "node")
    for key in NODE_FIELDS[1:]:
        if d.get(key) is None:
            c.err(None, f"node line is missing required key {key!r}")
    if not c.ok:
        return None
    time = c.time(d, "time")
    node = c.string(d, "node")
    state = d["state"]
    if state not in NODE_STATES:
        c.err("state", f"state must be 'unhealthy' or 'healthy', got {_kind(state)}")
    if not c.ok or time is None or node is None:
        return None
    return NodeEvent(time=time, node=node, state=state)


def _check_header(c: _LineChecker, d: dict[str, Any]) -> None:
    c.unknown(d, HEADER_FIELDS, "header")
    v = d.get("version", FORMAT_VERSION)
    if v != FORMAT_VERSION:
        c.err("version", f"unsupported trace format version {v!r}; this allot reads version 1")


class TraceReader:
    """Streams a canonical trace; iterate it, then read ``header``.

    Every problem is collected (up to the cap) and raised as one ``TraceDiagnostics`` when the
    iteration ends, after the good lines were yielded, so callers must not act on what they got
    until the iteration finished without error (the CLI writes to a temporary file for this).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        display_name: str | None = None,
        cap: int = 100,
        fit: JobFit | None = None,
    ):
        self.path = Path(path)
        self.fit = fit
        self.diags = DiagnosticCollector(display_name or str(path), cap=cap)
        self.header: dict[str, Any] = {}

    def __iter__(self) -> Iterator[TraceItem]:
        ids = IdIndex()
        last_time = -math.inf
        last_line = 0
        seen_content = False
        stopped = False
        try:
            for number, raw in numbered_lines(self.path, self.diags):
                if not raw.strip():
                    continue
                c = _LineChecker(raw, number, self.diags)
                try:
                    d = _DECODER.decode(raw)
                except _DuplicateKey as exc:
                    self.diags.add(number, _col(raw, exc.key, 2), f"key {exc.key!r} appears twice")
                    continue
                except json.JSONDecodeError as exc:
                    self.diags.add(number, exc.colno, f"not valid JSON: {exc.msg}")
                    continue
                except ValueError as exc:
                    self.diags.add(number, 1, f"not valid JSON: {exc}")
                    continue
                if not isinstance(d, dict):
                    self.diags.add(number, 1, "each line must be a JSON object")
                    continue
                kind = d.get("type", "job")
                if kind == "header":
                    if seen_content:
                        c.err("type", "a header line is only allowed as the first line")
                    else:
                        _check_header(c, d)
                        self.header = d
                    seen_content = True
                    continue
                seen_content = True
                item: TraceItem | None
                if kind == "node":
                    item = _parse_node(c, d)
                    tkey = "time"
                else:
                    item = _parse_job(c, d, ids, self.fit)
                    tkey = "submit"
                if item is None:
                    continue
                t = item_time(item)
                if t < last_time:
                    c.err(
                        tkey,
                        f"{tkey} {t:g} is earlier than line {last_line} ({last_time:g}); "
                        "lines must be in time order",
                    )
                    continue
                last_time, last_line = t, number
                yield item
            for cycle in ids.cycles():
                names = " -> ".join(repr(n) for n in (*cycle.jobs, cycle.jobs[0]))
                self.diags.add(
                    cycle.line,
                    cycle.col,
                    f"dependency cycle {names}: these jobs would wait for each other forever",
                )
            for line, first in ids.duplicates():
                # the id's column is not kept for every line (memory): 1 marks the line start
                self.diags.add(line, 1, f"duplicate id: line {first} uses it already")
            for name, line, col in ids.unknown_dependencies():
                self.diags.add(line, col, f"depends_on names unknown job {name!r}")
        except TooManyErrors:
            stopped = True
        self.diags.raise_if_any(stopped_early=stopped)


def iter_trace(
    path: str | Path, *, display_name: str | None = None, fit: JobFit | None = None
) -> Iterator[TraceItem]:
    """Stream jobs and node events in file order; raises TraceDiagnostics at the end on errors.

    With ``fit``, every job must also replay on that cluster of a config (``job_fit``)."""
    return iter(TraceReader(path, display_name=display_name, fit=fit))


def read_trace(
    path: str | Path, *, display_name: str | None = None, fit: JobFit | None = None
) -> Trace:
    """Read and validate a whole trace into memory (``fit``: as in :func:`iter_trace`)."""
    reader = TraceReader(path, display_name=display_name, fit=fit)
    jobs: list[JobSpec] = []
    nodes: list[NodeEvent] = []
    for item in reader:
        if isinstance(item, JobSpec):
            jobs.append(item)
        else:
            nodes.append(item)
    return Trace(header=reader.header, jobs=tuple(jobs), node_events=tuple(nodes))
