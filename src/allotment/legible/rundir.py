"""Reading a saved simulation (``allot simulate ... --save DIR``): the one place that knows the
run dir's files, so a change of format is one edit.

Files: ``meta.json`` (how the run was made), ``compiled.json`` (``allot compile --format json``),
``trace.jsonl`` (canonical trace), ``metrics.json``, ``events.jsonl`` (what the scheduler did, in
time order) and ``fairshare.jsonl`` (the Fair Tree state at t=0, every hour and the end).
Bad lines are reported as ``file:line:col: what is wrong``, all at once (UsageError, exit 2).
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from allotment.core.jobs import JobSpec
from allotment.errors import UsageError
from allotment.sim.events import EVENT_KINDS

FORMAT_VERSION = 1
HEADER = "header"  # the event log's first line: the run's static inputs (sim/events.py)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Event:
    """One line of ``events.jsonl``; fields absent from the line are empty."""

    t: float
    event: str
    job: str = ""
    account: str = ""
    gpus: int = 0
    nodes: tuple[str, ...] = ()
    allocated: bool = True
    by: str = ""
    rule: str = ""
    reason: str = ""
    at: float | None = None  # reserve: expected start
    lost_gpu_hours: float = 0.0
    node: str = ""
    charged_gpu_hours: float = 0.0


@dataclass(frozen=True, slots=True)
class LeafShare:
    leaf: str
    tier: int
    rank: int
    usage_gpu_hours: float
    entitlement_gpus: float
    running_gpus: int
    pending_gpus: int


@dataclass(frozen=True, slots=True)
class NodeShare:
    node: str
    usage_gpu_hours: float
    share: float


@dataclass(frozen=True, slots=True)
class FairShareSnapshot:
    t: float
    leaves: tuple[LeafShare, ...]
    nodes: tuple[NodeShare, ...]

    def leaf(self, name: str) -> LeafShare | None:
        return next((x for x in self.leaves if x.leaf == name), None)

    def node(self, name: str) -> NodeShare | None:
        return next((x for x in self.nodes if x.node == name), None)


@dataclass(frozen=True, slots=True)
class RunDir:
    path: Path
    meta: Mapping[str, Any]
    compiled: Mapping[str, Any]
    metrics: Mapping[str, Any]
    events: tuple[Event, ...]
    fairshare: tuple[FairShareSnapshot, ...]
    jobs: Mapping[str, JobSpec] = field(default_factory=dict)
    # the last event's time when ``events`` was not read (``read_run_head``: the moment index
    # stands for the log); None when ``events`` holds the whole log
    last_t: float | None = None

    @property
    def cluster(self) -> str:
        return str(self.meta.get("cluster", ""))

    @property
    def capacity_gpus(self) -> int:
        return int(self.meta.get("capacity_gpus", 0))

    @property
    def t0(self) -> dt.datetime:
        return dt.datetime.fromisoformat(str(self.meta.get("t0", "1970-01-01T00:00:00+00:00")))

    @property
    def end(self) -> float:
        """The horizon, or the last event for a trace run until done (``days`` null)."""
        last = self.events[-1].t if self.events else (self.last_t or 0.0)
        return max(float(self.meta.get("days") or 0.0) * 86400.0, last)

    def snapshot_at(self, t: float) -> FairShareSnapshot | None:
        """The newest Fair Tree snapshot taken at or before ``t``."""
        times = [s.t for s in self.fairshare]
        i = bisect.bisect_right(times, t)
        return self.fairshare[i - 1] if i else (self.fairshare[0] if self.fairshare else None)

    def job_events(self, job: str) -> list[Event]:
        return [e for e in self.events if e.job == job]

    def account_jobs(self, account: str) -> list[JobSpec]:
        """The account's jobs in trace order, without parsing the others when ``jobs`` is read
        lazily (``run_index.TraceJobs``)."""
        of = getattr(self.jobs, "of_account", None)
        if of is not None:
            return list(of(account))
        return [s for s in self.jobs.values() if s.account == account]


def read_run(path: Path) -> RunDir:
    """Read every file of a run dir; raise one UsageError listing every problem."""
    errors: list[str] = []
    meta, compiled, metrics = _head(path, errors)
    events = tuple(e for e in _jsonl(path / "events.jsonl", errors, check_event, run_event_from_json) if e is not None)
    fairshare = tuple(_jsonl(path / "fairshare.jsonl", errors, _check_snapshot, _snapshot))
    jobs = _jobs(path / "trace.jsonl", errors)
    if errors:
        raise UsageError("\n".join(errors))
    return RunDir(path, meta, compiled, metrics, events, fairshare, jobs)


def read_run_head(path: Path, jobs: Mapping[str, JobSpec], last_t: float | None) -> RunDir:
    """A run dir without its event log and trace, for a reader that has the moment index
    (``run_index``) stand for them: ``events`` is empty and ``jobs`` the caller's."""
    errors: list[str] = []
    meta, compiled, metrics = _head(path, errors)
    fairshare = tuple(_jsonl(path / "fairshare.jsonl", errors, _check_snapshot, _snapshot))
    if errors:
        raise UsageError("\n".join(errors))
    return RunDir(path, meta, compiled, metrics, (), fairshare, jobs, last_t)


def read_run_folded(path: Path, fold: Callable[[Iterator[Event]], T]) -> tuple[RunDir, T]:
    """A run dir whose event log is streamed through ``fold`` (which must read it to the end)
    instead of kept: ``allot report`` needs each run's intervals, not 300,000 records held at
    once (issue 27 item 5: <= 300 MB).  Every bad line of the files read is still reported, all
    at once; the trace is not read (``jobs`` is empty), as a report does not look at it."""
    errors: list[str] = []
    meta, compiled, metrics = _head(path, errors)
    last: list[float] = []

    def events() -> Iterator[Event]:
        for e in _jsonl_lines(path / "events.jsonl", errors, check_event, run_event_from_json):
            if e is not None:
                last[:] = [e.t]
                yield e

    folded = fold(events())
    fairshare = tuple(_jsonl(path / "fairshare.jsonl", errors, _check_snapshot, _snapshot))
    if errors:
        raise UsageError("\n".join(errors))
    return RunDir(path, meta, compiled, metrics, (), fairshare, {}, last[0] if last else None), folded


def _head(path: Path, errors: list[str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    if not path.is_dir():
        raise UsageError(f"--run {path}: not a folder (make one with `allot simulate ... --save DIR`)")
    meta = _json(path / "meta.json", errors)
    if meta and meta.get("format_version") != FORMAT_VERSION:
        errors.append(f"{path / 'meta.json'}:1:1: format_version {meta.get('format_version')!r}, expected {FORMAT_VERSION}")
    elif meta:
        errors += [f"{path / 'meta.json'}:1:1: {p}" for p in _meta_problems(meta)]
    compiled = _json(path / "compiled.json", errors)
    metrics = _json(path / "metrics.json", errors)
    return meta, compiled, metrics


def _json(p: Path, errors: list[str]) -> dict[str, Any]:
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        errors.append(f"{p}: missing")
        return {}
    except json.JSONDecodeError as exc:
        errors.append(f"{p}:{exc.lineno}:{exc.colno}: {exc.msg}")
        return {}
    if not isinstance(d, dict):
        errors.append(f"{p}:1:1: expected a JSON object")
        return {}
    return d


def _jsonl(
    p: Path, errors: list[str], check: Callable[[dict[str, Any]], str], convert: Callable[[dict[str, Any]], T]
) -> list[T]:
    """Each good line of ``p`` converted as soon as it is read: a 30-day log has some 290,000
    lines, and holding their dicts all at once (besides the records made of them) was most of
    ``allot explain``'s and ``allot report``'s peak memory."""
    return list(_jsonl_lines(p, errors, check, convert))


def _jsonl_lines(
    p: Path, errors: list[str], check: Callable[[dict[str, Any]], str], convert: Callable[[dict[str, Any]], T]
) -> Iterator[T]:
    try:
        f = p.open(encoding="utf-8")
    except FileNotFoundError:
        errors.append(f"{p}: missing")
        return
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(f"{p}:{n}:{exc.colno}: {exc.msg}")
                continue
            problem = check(d) if isinstance(d, dict) else "expected a JSON object"
            if problem:
                errors.append(f"{p}:{n}:1: {problem}")
            else:
                yield convert(d)


def _meta_problems(meta: Mapping[str, Any]) -> list[str]:
    """The fields the views compute with: a hand-edited or corrupt one is one line, never a
    traceback (``days`` is null for a trace run until every job is done)."""
    out = []
    days = meta.get("days")
    if days is not None and not (_number(days) and 0 <= days < math.inf):
        out.append(f"'days' must be null or a finite number >= 0, got {days!r}")
    gpus = meta.get("capacity_gpus", 0)
    if not (isinstance(gpus, int) and not isinstance(gpus, bool) and gpus >= 0):
        out.append(f"'capacity_gpus' must be a whole number >= 0, got {gpus!r}")
    try:
        dt.datetime.fromisoformat(str(meta.get("t0", "1970-01-01T00:00:00+00:00")))
    except ValueError:
        out.append(f"'t0' must be an ISO 8601 time, got {meta.get('t0')!r}")
    return out


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def check_event(d: dict[str, Any]) -> str:
    if d.get("event") == HEADER:
        return ""
    if not isinstance(d.get("t"), int | float):
        return "'t' must be a number (seconds from t0)"
    if d.get("event") not in EVENT_KINDS:
        return f"'event' must be one of {', '.join(EVENT_KINDS)}, got {d.get('event')!r}"
    return ""


def _check_snapshot(d: dict[str, Any]) -> str:
    if not isinstance(d.get("t"), int | float):
        return "'t' must be a number (seconds from t0)"
    if not isinstance(d.get("leaves"), list) or not isinstance(d.get("nodes"), list):
        return "'leaves' and 'nodes' must be lists"
    return ""


def run_event_from_json(d: dict[str, Any]) -> Event | None:
    """The line as an ``Event``; the header line (the run's static inputs) is none."""
    if d.get("event") == HEADER:
        return None
    return Event(
        t=float(d["t"]),
        event=str(d["event"]),
        job=str(d.get("job", "")),
        account=str(d.get("account", "")),
        gpus=int(d.get("gpus", 0)),
        nodes=tuple(str(n) for n in d.get("nodes", ())),
        allocated=bool(d.get("allocated", True)),
        by=str(d.get("by") or ""),
        rule=str(d.get("rule", "")),
        reason=str(d.get("reason", "")),
        at=float(d["at"]) if d.get("at") is not None else None,
        lost_gpu_hours=float(d.get("lost_gpu_hours", 0.0)),
        node=str(d.get("node", "")),
        charged_gpu_hours=float(d.get("charged_gpu_hours", 0.0)),
    )


def _snapshot(d: dict[str, Any]) -> FairShareSnapshot:
    leaves = tuple(
        LeafShare(
            str(x["leaf"]), int(x.get("tier", 0)), int(x.get("rank", 0)),
            float(x.get("usage_gpu_hours", 0.0)), float(x.get("entitlement_gpus", 0.0)),
            int(x.get("running_gpus", 0)), int(x.get("pending_gpus", 0)),
        )
        for x in d["leaves"]
    )
    nodes = tuple(
        NodeShare(str(x["node"]), float(x.get("usage_gpu_hours", 0.0)), float(x.get("share", 0.0)))
        for x in d["nodes"]
    )
    return FairShareSnapshot(float(d["t"]), leaves, nodes)


def _jobs(p: Path, errors: list[str]) -> dict[str, JobSpec]:
    from allotment.traces.diagnostics import TraceDiagnostics
    from allotment.traces.reader import read_trace

    if not p.exists():
        errors.append(f"{p}: missing")
        return {}
    try:
        return {j.id: j for j in read_trace(p).jobs}
    except TraceDiagnostics as exc:
        errors.append(str(exc))
        return {}
