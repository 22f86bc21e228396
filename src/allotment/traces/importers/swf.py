"""Standard Workload Format (Parallel Workloads Archive, swf.html): HPC job logs.

18 whitespace-separated integer fields a line, ``-1`` = unknown, ``;`` header comments.  What we
use (field numbers 1-based, as in the spec):

* 1 job number -> ``id``;  2 submit time (s) -> ``submit``;  4 run time (s) -> ``work``;
* 5 allocated processors (else 8, requested) -> ``gpus`` = ceil(processors x ``gpus_per_proc``),
  at least 1 (SWF logs are CPU machines; the scale says how many processors one GPU stands for);
* 12 user -> ``user`` (``u<N>``); account from 13 group (``group<N>``, default), 15 queue
  (``queue<N>``), 16 partition or 12 user, by ``account_from``; 15 queue -> ``klass``.
* Header ``MaxProcs`` (else ``MaxNodes``) is the machine size, ``UnixStartTime`` its time 0.

Skipped (counted): run time missing (-1) or 0, processors missing or 0.  Errors: another
negative run time, sizes beyond the trace bounds (``traces.bounds``), and a job of more
processors than the header's ``MaxProcs`` (the machine the log itself describes).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from allotment.traces.bounds import duration_problem, gpus_problem
from allotment.traces.importers.base import ImportContext, NodeGroupShape, RawJob
from allotment.traces.source import numbered_lines

AccountFrom = Literal["group", "queue", "partition", "user"]
_TOKEN = re.compile(r"\S+")
_HEADER = re.compile(r"^;\s*(\w+)\s*:\s*(.*?)\s*$")
_ACCOUNT_FIELD = {"group": 12, "queue": 14, "partition": 15, "user": 11}  # 0-based


@dataclass(frozen=True, slots=True)
class SwfImporter:
    gpus_per_proc: float = 1.0
    account_from: AccountFrom = "group"
    default_account: str = "default"
    gpus_per_node: int = 8
    name: str = "swf"

    def read(self, path: Path, ctx: ImportContext) -> Iterator[RawJob]:
        max_procs: int | None = None
        machine: int | None = None  # MaxProcs as the header states it: no job is larger
        for number, line in numbered_lines(path, ctx.diags):
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                m = _HEADER.match(s)
                if m:
                    max_procs = self._header(m.group(1), m.group(2), ctx, max_procs)
                    machine = max_procs if m.group(1) == "MaxProcs" else machine
                continue
            ctx.records += 1
            job = self._job(number, line, ctx, machine)
            if job is not None:
                yield job
        if max_procs:
            gpus = max(1, math.ceil(max_procs * self.gpus_per_proc))
            nodes = max(1, math.ceil(gpus / self.gpus_per_node))
            ctx.cluster = (NodeGroupShape("gpu", self.gpus_per_node, nodes),)
            ctx.cluster_source = (
                f"SWF header MaxProcs {max_procs} x gpus_per_proc {self.gpus_per_proc:g}"
            )

    def _header(
        self, key: str, value: str, ctx: ImportContext, max_procs: int | None
    ) -> int | None:
        try:
            if key == "UnixStartTime":
                ctx.start_iso = dt.datetime.fromtimestamp(int(value), dt.UTC).isoformat()
            elif key == "MaxProcs" or (key == "MaxNodes" and max_procs is None):
                return int(value) if int(value) > 0 else max_procs
        except ValueError:
            pass  # header comments are informative; a malformed one is not worth failing
        return max_procs

    def _job(
        self, number: int, line: str, ctx: ImportContext, machine: int | None = None
    ) -> RawJob | None:
        fields = line.split()
        try:
            values = [int(t) for t in fields]  # the fast path: a well-formed line
        except ValueError:
            parsed = self._slow_values(number, line, ctx)
            if parsed is None:
                return None
            values = parsed
        if len(values) != 18:
            ctx.diags.add(number, 1, f"an SWF job line has 18 fields, this one has {len(values)}")
            return None
        job_no, submit, runtime = values[0], values[1], values[3]
        procs = values[4] if values[4] > 0 else values[7]
        if submit < 0:
            ctx.diags.add(
                number, _column(line, 1), f"submit time must not be negative, got {submit}"
            )
            return None
        if runtime == -1:  # the SWF spec's "unknown"
            ctx.skip("run time missing")
            return None
        if runtime == 0:
            ctx.skip("zero run time")
            return None
        if procs <= 0:
            ctx.skip("processors missing")
            return None
        if machine is not None and procs > machine:
            ctx.diags.add(
                number,
                _column(line, 4 if values[4] > 0 else 7),
                f"a job of {procs:,} processors is larger than the machine its header describes "
                f"(MaxProcs {machine:,}); it could never run there",
            )
            return None
        gpus = max(1, math.ceil(procs * self.gpus_per_proc))
        problem = duration_problem("run time", runtime)
        bad_work = ctx.refuse(number, problem, lambda: _column(line, 3))
        problem = gpus_problem("gpus", gpus)
        if bad_work | ctx.refuse(number, problem, lambda: _column(line, 4 if values[4] > 0 else 7)):
            return None
        user = values[11]
        raw_account = values[_ACCOUNT_FIELD[self.account_from]]
        prefix = {"group": "group", "queue": "queue", "partition": "partition", "user": "u"}
        account = (
            f"{prefix[self.account_from]}{raw_account}"
            if raw_account >= 0
            else self.default_account
        )
        return RawJob(
            submit=float(submit),
            id=str(job_no),
            account=account,
            gpus=gpus,
            work=float(runtime),
            user=f"u{user}" if user >= 0 else "",
            klass=f"queue{values[14]}" if values[14] >= 0 else None,
            line=number,
        )

    def _slow_values(self, number: int, line: str, ctx: ImportContext) -> list[int] | None:
        """Parse a line that is not all integers, reporting the first bad field's column."""
        values: list[int] = []
        for m in _TOKEN.finditer(line):
            text = m.group()
            try:
                values.append(int(float(text)))  # some logs write 12.0
            except (ValueError, OverflowError):  # 'x', or '1e400' (an infinite float)
                ctx.diags.add(number, m.start() + 1, f"SWF fields are integers, got {text!r}")
                return None
        return values


def _column(line: str, index: int) -> int:
    """1-based column of the field ``index`` (0-based)."""
    for i, m in enumerate(_TOKEN.finditer(line)):
        if i == index:
            return m.start() + 1
    return 1
