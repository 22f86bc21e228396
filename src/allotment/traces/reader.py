"""Reading canonical traces: streaming, every problem reported at its line and key's column.

Each line is decoded and checked by ``job_lines`` (a fast path for well-formed job lines, the
full checker otherwise); this module adds what needs the whole file: time order, duplicate ids,
unknown dependencies and dependency cycles, and, with a ``JobFit``, the config checks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from allotment.core.jobs import JobSpec, NodeEvent
from allotment.traces.diagnostics import DiagnosticCollector, TooManyErrors
from allotment.traces.format import Trace, TraceItem, item_time
from allotment.traces.idcheck import IdIndex
from allotment.traces.job_fit import JobFit
from allotment.traces.job_lines import check_header, parse_job, parse_node
from allotment.traces.line_checker import DuplicateKey, LineChecker, col_of, decode_line
from allotment.traces.source import numbered_lines


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
                c = LineChecker(raw, number, self.diags)
                try:
                    d = decode_line(raw)  # DECODER.decode, without its interpreted layers
                # one name per exception type: compiled (``_compiled.HOT``), a name has one type
                except DuplicateKey as dup:
                    self.diags.add(
                        number, col_of(raw, dup.key, 2), f"key {dup.key!r} appears twice"
                    )
                    continue
                except json.JSONDecodeError as bad:
                    self.diags.add(number, bad.colno, f"not valid JSON: {bad.msg}")
                    continue
                except ValueError as exc:
                    self.diags.add(number, 1, f"not valid JSON: {exc}")
                    continue
                except RecursionError:
                    self.diags.add(number, 1, "not valid JSON here: nested too deeply")
                    continue
                if not isinstance(d, dict):
                    self.diags.add(number, 1, "each line must be a JSON object")
                    continue
                kind = d.get("type", "job")
                if kind == "header":
                    if seen_content:
                        c.err("type", "a header line is only allowed as the first line")
                    else:
                        check_header(c, d)
                        self.header = d
                    seen_content = True
                    continue
                seen_content = True
                item: TraceItem | None
                if kind == "node":
                    item = parse_node(c, d)
                    tkey = "time"
                else:
                    item = parse_job(c, d, ids, self.fit)
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
