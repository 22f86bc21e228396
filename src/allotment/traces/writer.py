"""Writing canonical traces, byte-deterministically and atomically.

Keys in the fixed order of ``JOB_FIELDS``, integral numbers as integers, absent optional fields
(``null``, empty ``depends_on``) left out, compact separators, and gzip output (``.gz``) with a
zero timestamp: the same jobs always give the same bytes.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from allotment.atomic_file import commit, discard, open_temp
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.traces.format import FORMAT_VERSION, HEADER_FIELDS, TraceItem, item_time, sort_key


def _num(x: float) -> float | int:
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def job_to_dict(job: JobSpec) -> dict[str, Any]:
    """The job as it appears on a line: fixed key order, absent optionals omitted."""
    out: dict[str, Any] = {
        "id": job.id,
        "submit": _num(job.submit),
        "user": job.user,
        "account": job.account,
        "gpus": job.gpus,
    }
    if job.gpus_per_node is not None:
        out["gpus_per_node"] = job.gpus_per_node
    out["work"] = _num(job.work)
    if job.min_runtime is not None:
        out["min_runtime"] = _num(job.min_runtime)
    out["resumable"] = job.resumable
    if job.checkpoint_interval is not None:
        out["checkpoint_interval"] = _num(job.checkpoint_interval)
    out["priority"] = job.priority
    out["kind"] = job.kind
    if job.deadline is not None:
        out["deadline"] = _num(job.deadline)
    if job.depends_on:
        out["depends_on"] = list(job.depends_on)
    if job.gpu_type is not None:
        out["gpu_type"] = job.gpu_type
    return out


def node_to_dict(event: NodeEvent) -> dict[str, Any]:
    return {"type": "node", "time": _num(event.time), "node": event.node, "state": event.state}


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode(item: TraceItem) -> str:
    """One line, without the newline."""
    d = job_to_dict(item) if isinstance(item, JobSpec) else node_to_dict(item)
    return _ENCODER.encode(d)


def encode_header(header: Mapping[str, Any]) -> str:
    d: dict[str, Any] = {"type": "header", "version": FORMAT_VERSION}
    for key in HEADER_FIELDS[2:]:
        value = header.get(key)
        if value is not None:
            d[key] = _num(value) if isinstance(value, float) else value
    return _ENCODER.encode(d)


def sorted_items(jobs: Iterable[JobSpec], node_events: Iterable[NodeEvent]) -> list[TraceItem]:
    """Jobs and node events merged in the canonical order (in memory)."""
    items: list[TraceItem] = [*jobs, *node_events]
    items.sort(key=sort_key)
    return items


class AtomicWriter:
    """Writes lines to a temporary file next to ``path``; ``commit`` renames it into place.

    A failure before ``commit`` leaves no file behind, so an output is never half-written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp, self._raw = open_temp(self.path)  # the user's umask applies (atomic_file)
        self._gz: gzip.GzipFile | None = None
        sink: gzip.GzipFile | IO[bytes] = self._raw
        if self.path.suffix == ".gz":
            self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0)
            sink = self._gz
        self._sink = sink
        self._buf: list[str] = []

    def write_line(self, line: str) -> None:
        self._buf.append(line)
        if len(self._buf) >= 4096:
            self._flush()

    def _flush(self) -> None:
        if self._buf:
            self._sink.write(("\n".join(self._buf) + "\n").encode("utf-8"))
            self._buf.clear()

    def commit(self) -> None:
        self._flush()
        if self._gz is not None:
            self._gz.close()
        self._raw.close()
        commit(self._tmp, self.path)

    def abort(self) -> None:
        try:
            if self._gz is not None:
                self._gz.close()
            self._raw.close()
        finally:
            discard(self._tmp, self.path)

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def write_trace(
    path: str | Path,
    items: Iterable[TraceItem],
    header: Mapping[str, Any] | None = None,
) -> int:
    """Write ``items`` (already in canonical order, see :func:`sorted_items`) atomically.

    Returns the number of lines written (header excluded).  Raises ValueError if the items are
    out of order, since the reader would reject the file.
    """
    n = 0
    last = -math.inf
    with AtomicWriter(path) as out:
        if header is not None:
            out.write_line(encode_header(header))
        for item in items:
            t = item_time(item)
            if t < last:
                raise ValueError(f"trace items out of time order at {t} after {last}")
            last = t
            out.write_line(encode(item))
            n += 1
    return n
