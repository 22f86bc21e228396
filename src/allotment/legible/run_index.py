"""A saved run's moment index (``moments.jsonl``, written by ``allot simulate --save``): where
``allot explain`` finds the run's state at an instant without folding 300,000 events from 0.

Reading a 30-day run whole (every event, every trace line) was most of ``allot explain``'s 5 s
(compiled; issue 27 item 5, target 2 s).  The index holds, once a day of run time, the
``Moment`` that ``replay.moment`` gives at that instant and the byte offset of the first event
it did not apply; explain starts from the nearest checkpoint at or before its instant and folds
the rest through the same ``replay.Replay``.  Nothing is recomputed differently: the checkpoint
is that fold's own state, saved.  A job's history is the lines naming it (found as bytes, then
parsed), and a job's spec its own trace line, parsed when asked for.

First line: the index's format and version, the sha256 of ``events.jsonl`` and ``trace.jsonl``
it was made from, the last event's time, when each job finished or was rejected (as the byte
offset of that event: a checkpoint's finished jobs are those before its offset) and the
checkpoints (time, events offset, offset of the checkpoint's line after the first).  A missing
index means the whole run is read as before; an index that does not match its files (edited,
another version, a different run) is ``IndexUnusable``: the caller says so in one line and
reads the whole run.  Same run, same index bytes (sorted keys, no clock)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allotment.atomic_file import commit, discard, open_temp
from allotment.core.jobs import JobSpec
from allotment.legible.replay import Interval, Moment, Replay
from allotment.legible.rundir import Event, check_event, run_event_from_json

FILE = "moments.jsonl"
FORMAT = "allot-moment-index"
FORMAT_VERSION = 1
EVERY_S = 86400.0  # a day of run time between checkpoints: at most ~10,000 events to fold
_REPLAYED_AFTER_END = ("submit", "preempt")  # the events that read a first submit time


class IndexUnusable(Exception):
    """The index is there but cannot stand for the run's files; the message says why."""


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as f:
        while b := f.read(1 << 20):
            h.update(b)
    return h.hexdigest()


def _job_key(job: str) -> bytes:
    """How an event line names its job (``sim.events`` writes compact JSON)."""
    return b'"job":' + json.dumps(job).encode()


def write_index(run_dir: Path) -> bool:
    """Write ``run_dir/moments.jsonl`` from its ``events.jsonl``; False (and no index) when the
    log is one the index cannot stand for: a bad line (``read_run`` reports it), a job named in
    another spelling than the compact one ``history`` looks for, or a finished job coming back."""
    events_path = run_dir / "events.jsonl"
    r = Replay(Moment(0.0))
    checkpoints: list[tuple[float, int, dict[str, Any]]] = []
    finished: dict[str, int] = {}
    rejected: dict[str, int] = {}
    next_t = 0.0
    last_t: float | None = None
    offset = 0
    with events_path.open("rb") as f:
        for raw in f:
            here, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
            except ValueError:
                return False
            if not isinstance(d, dict) or check_event(d):
                return False
            e = run_event_from_json(d)
            if e is None:
                continue
            if e.job and _job_key(e.job) not in raw:
                return False
            if e.event in _REPLAYED_AFTER_END and (e.job in finished or e.job in rejected):
                return False
            while e.t > next_t:
                checkpoints.append((next_t, here, _state(r)))
                next_t += EVERY_S
            r.apply(e)
            last_t = e.t
            if e.event == "end":
                finished.setdefault(e.job, here)
            elif e.event == "reject":
                rejected.setdefault(e.job, here)
    checkpoints.append((next_t, offset, _state(r)))  # past the last event: the whole log applied
    lines = [json.dumps(c, sort_keys=True, separators=(",", ":")) + "\n" for _, _, c in checkpoints]
    table, at = [], 0
    for (t, off, _), line in zip(checkpoints, lines, strict=True):
        table.append([t, off, at])
        at += len(line.encode())
    head = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "events_sha256": _sha256(events_path), "trace_sha256": _sha256(run_dir / "trace.jsonl"),
        "last_t": last_t, "checkpoints": table, "finished": finished, "rejected": rejected,
    }
    target = run_dir / FILE
    tmp, out = open_temp(target)
    try:
        with out:
            out.write((json.dumps(head, sort_keys=True, separators=(",", ":")) + "\n").encode())
            out.writelines(line.encode() for line in lines)
    except BaseException:
        discard(tmp, target)
        raise
    commit(tmp, target)
    return True


def _state(r: Replay) -> dict[str, Any]:
    """A checkpoint: the fold's state.  First submit times are kept only for jobs not finished
    or rejected (``write_index`` refuses a log where such a job is submitted or preempted
    again), and a waiting job's only where it is not the time it waits since (almost never)."""
    m = r.m
    gone = m.done | m.rejected
    sub = r.submitted
    return {
        "running": [[iv.job, iv.account, iv.gpus, list(iv.nodes), iv.allocated, iv.start] for iv in m.running.values()],
        "pending": dict(m.pending), "drained": dict(m.drained), "progress_s": dict(m.progress_s),
        "submitted": {j: t for j, t in sub.items() if j not in gone and m.pending.get(j) != t},
        "never_submitted": sorted(j for j in m.pending if j not in sub),
    }


@dataclass(frozen=True, slots=True)
class MomentIndex:
    """An opened index whose files match it (``open_index``)."""

    run_dir: Path
    last_t: float | None
    checkpoints: tuple[tuple[float, int, int], ...]
    finished: Mapping[str, int]
    rejected: Mapping[str, int]
    body_offset: int  # where the checkpoint lines start in the index file

    def moment(self, t: float) -> Moment:
        """``replay.moment(run, t)``, from the newest checkpoint at or before ``t``."""
        k = -1
        for i, (ct, _, _) in enumerate(self.checkpoints):
            if ct <= t:
                k = i
        r = Replay(Moment(t))
        start = 0
        if k >= 0:
            _, start, line_at = self.checkpoints[k]
            r = self._restore(t, start, line_at)
        with (self.run_dir / "events.jsonl").open("rb") as f:
            f.seek(start)
            for raw in f:
                if not raw.strip():
                    continue
                e = run_event_from_json(json.loads(raw))
                if e is None:
                    continue
                if e.t > t:
                    break
                r.apply(e)
        return r.m

    def _restore(self, t: float, start: int, line_at: int) -> Replay:
        with (self.run_dir / FILE).open("rb") as f:
            f.seek(self.body_offset + line_at)
            try:
                c = json.loads(f.readline())
                running = {
                    str(j): Interval(str(j), str(a), int(g), tuple(str(n) for n in nodes), bool(al), float(s))
                    for j, a, g, nodes, al, s in c["running"]
                }
                m = Moment(
                    t, running, {str(j): float(v) for j, v in c["pending"].items()},
                    {str(n): float(v) for n, v in c["drained"].items()},
                    {str(j): float(v) for j, v in c["progress_s"].items()},
                    {j for j, off in self.finished.items() if off < start},
                    {j for j, off in self.rejected.items() if off < start},
                )
                never = set(c["never_submitted"])
                submitted = {j: v for j, v in m.pending.items() if j not in never}
                submitted.update((str(j), float(v)) for j, v in c["submitted"].items())
                return Replay(m, submitted)
            except (ValueError, KeyError, TypeError) as exc:
                raise IndexUnusable(f"{self.run_dir / FILE}: checkpoint at offset {line_at} is unreadable ({exc})") from None

    def history(self, job: str) -> list[Event]:
        """``RunDir.job_events(job)``: the job's events in log order."""
        key = _job_key(job)
        out = []
        with (self.run_dir / "events.jsonl").open("rb") as f:
            for raw in f:
                if key in raw:
                    e = run_event_from_json(json.loads(raw))
                    if e is not None and e.job == job:
                        out.append(e)
        return out


def open_index(run_dir: Path) -> MomentIndex | None:
    """The run's index, None when it has none; ``IndexUnusable`` when it does not match."""
    p = run_dir / FILE
    try:
        f = p.open("rb")
    except FileNotFoundError:
        return None
    with f:
        first = f.readline()
        body = f.tell()
    try:
        head = json.loads(first)
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise IndexUnusable(f"{p}:1:1: not a moment index")
        if head.get("format_version") != FORMAT_VERSION:
            raise IndexUnusable(f"{p}:1:1: format_version {head.get('format_version')!r}, expected {FORMAT_VERSION}")
        for name in ("events", "trace"):
            if head.get(f"{name}_sha256") != _sha256(run_dir / f"{name}.jsonl"):
                raise IndexUnusable(f"{p}:1:1: made from another {name}.jsonl than this run's")
        last = head["last_t"]
        cps = tuple((float(t), int(o), int(a)) for t, o, a in head["checkpoints"])
        fin = {str(j): int(o) for j, o in head["finished"].items()}
        rej = {str(j): int(o) for j, o in head["rejected"].items()}
        return MomentIndex(run_dir, None if last is None else float(last), cps, fin, rej, body)
    except FileNotFoundError as exc:
        raise IndexUnusable(f"{p}: {exc.filename} is missing") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise IndexUnusable(f"{p}:1:1: unreadable ({exc})") from None


_ACCOUNT = re.compile(rb'"account":("(?:[^"\\]|\\.)*")')


class TraceJobs(Mapping[str, JobSpec]):
    """``RunDir.jobs`` without reading every job: the trace's lines found by id (and by
    account, for ``of_account``) in one pass over the bytes, each parsed by the trace reader's
    own line parser when first asked for.  Only used behind a matching index (``open_index``
    checked the trace's sha256), so every line is one ``read_trace`` accepted at save time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data = path.read_bytes()
        self._at: dict[str, int] = {}
        self._accounts: dict[str, list[str]] = {}
        self._got: dict[str, JobSpec] = {}
        at = 0
        for raw in self._data.split(b"\n"):
            here, at = at, at + len(raw) + 1
            if not raw.startswith(b'{"id":"'):
                continue
            acc = _ACCOUNT.search(raw)
            if b"\\" in raw:  # an escape somewhere: let JSON read the strings
                job = str(json.JSONDecoder().raw_decode(raw.decode(), 6)[0])
                account = str(json.loads(acc.group(1))) if acc is not None else None
            else:
                job = raw[7:raw.index(b'"', 7)].decode()
                account = acc.group(1)[1:-1].decode() if acc is not None else None
            self._at[job] = here
            if account is not None:
                self._accounts.setdefault(account, []).append(job)

    def __getitem__(self, job: str) -> JobSpec:
        got = self._got.get(job)
        if got is None:
            got = self._parse(self._at[job])
            self._got[job] = got
        return got

    def _parse(self, at: int) -> JobSpec:
        from allotment.traces.diagnostics import DiagnosticCollector
        from allotment.traces.job_lines import checked_job, fast_job
        from allotment.traces.line_checker import DECODER, LineChecker

        end = self._data.find(b"\n", at)
        raw = self._data[at:end if end >= 0 else len(self._data)].decode()
        d = DECODER.decode(raw)
        c = LineChecker(raw, 0, DiagnosticCollector(str(self.path)))
        job = fast_job(d) or checked_job(c, d)
        if job is None or not c.ok:
            raise IndexUnusable(f"{self.path}: the line at byte {at} is not a job")
        return job

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    def of_account(self, account: str) -> list[JobSpec]:
        """The account's jobs in trace order (lines whose ``account`` names it)."""
        return [s for s in (self[j] for j in self._accounts.get(account, ())) if s.account == account]
