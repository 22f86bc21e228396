"""Slurm accounting, ``sacct -P`` output: how a site replays its own last month.

Expected: a header line naming the fields and ``|``-separated rows (``sacct -a -P -S ... -E ...
--format=JobID,User,Account,Partition,QOS,Submit,Start,End,Elapsed,NNodes,AllocTRES,State``;
any order, extra fields ignored).  Required fields: JobID, Submit, Account, a GPU count source
(AllocTRES, else ReqTRES, AllocGRES or ReqGRES) and the run time (Elapsed, else Start and End).

* Job steps (``123.batch``, ``123.0``, ``123.extern``) are skipped silently: the allocation line
  already covers them.  Pending array placeholders (``123_[4-9]``) are skipped (counted).
* GPUs: ``gres/gpu=N`` in the TRES, else the sum of ``gres/gpu:TYPE=N``; one typed entry gives
  ``gpu_type``.  A GPU entry whose count is not a whole number (``gres/gpu=nan``) is an error at
  its column, not a job without GPUs.  ``NNodes`` (or TRES ``node=``) gives ``gpus_per_node`` when it divides.
* Times are absolute ISO (Slurm prints local time without zone; read as UTC, see fields.py);
  ``work`` is Elapsed.  Jobs that never started or have no GPUs are skipped (counted).
* ``klass`` is the QOS (else the partition); the account comes from Account (default),
  Partition, QOS or User by ``account_from``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from allotment.traces.bounds import duration_problem, gpus_problem
from allotment.traces.importers.base import ImportContext, RawJob
from allotment.traces.importers.fields import parse_elapsed, parse_int, parse_timestamp
from allotment.traces.source import numbered_lines

_GPU_PLAIN = re.compile(r"(?:^|,)gres/gpu=(\d+)")
_GPU_TYPED = re.compile(r"(?:^|,)gres/gpu:([^=,]+)=(\d+)")
_GPU_ANY = re.compile(r"(?:^|,)(gres/gpu(?::[^=,]+)?)=([^,]*)")  # every GPU entry, any value
_GRES = re.compile(r"(?:^|,)gpu(?::([^:,()]+))?:(\d+)")
_NODES = re.compile(r"(?:^|,)node=(\d+)")
_EPOCH = "1970-01-01T00:00:00+00:00"
_UNKNOWN = ("", "unknown", "none", "n/a")
_TRES_FIELDS = ("AllocTRES", "ReqTRES")
_GRES_FIELDS = ("AllocGRES", "ReqGRES")


@dataclass(frozen=True, slots=True)
class SacctImporter:
    account_from: Literal["account", "partition", "qos", "user"] = "account"
    default_account: str = "default"
    delimiter: str = "|"
    name: str = "sacct"

    def read(self, path: Path, ctx: ImportContext) -> Iterator[RawJob]:
        header: dict[str, int] | None = None
        ctx.start_iso = _EPOCH  # sacct times are absolute: time 0 is the Unix epoch
        for number, line in numbered_lines(path, ctx.diags):
            if not line.strip():
                continue
            cells = line.split(self.delimiter)
            if header is None:
                header = {name.strip(): i for i, name in enumerate(cells)}
                if not self._check_header(header, ctx, number):
                    return
                continue
            job_id = cells[header["JobID"]].strip() if len(cells) > header["JobID"] else ""
            if "." in job_id:
                continue  # a step of an allocation already counted
            ctx.records += 1
            job = self._job(number, line, cells, header, ctx)
            if job is not None:
                yield job
        if header is None:
            ctx.diags.add(1, 1, "empty sacct output: expected a header line (run sacct -P)")

    def _check_header(self, header: dict[str, int], ctx: ImportContext, number: int) -> bool:
        missing = [f for f in ("JobID", "Submit", "Account") if f not in header]
        if not any(f in header for f in (*_TRES_FIELDS, *_GRES_FIELDS)):
            missing.append("AllocTRES")
        if "Elapsed" not in header and not {"Start", "End"} <= set(header):
            missing.append("Elapsed (or Start and End)")
        if missing:
            ctx.diags.add(
                number, 1, f"sacct header lacks {', '.join(missing)}; run sacct -P --format=..."
            )
            return False
        return True

    def _job(
        self, number: int, line: str, cells: list[str], header: dict[str, int], ctx: ImportContext
    ) -> RawJob | None:
        if len(cells) != len(header):
            ctx.diags.add(number, 1, f"expected {len(header)} fields, got {len(cells)}")
            return None

        def cell(name: str) -> str:
            return cells[header[name]].strip() if name in header else ""

        def col(name: str) -> int:
            i = header[name]
            return 1 + sum(len(c) + 1 for c in cells[:i])

        job_id = cell("JobID")
        if "[" in job_id:
            ctx.skip("pending array placeholder")
            return None
        try:
            submit_text = cell("Submit")
            submit = parse_timestamp(submit_text, "Submit")
        except ValueError as exc:
            ctx.diags.add(number, col("Submit"), str(exc))
            return None
        start_text = cell("Start")
        if "Start" in header and start_text.lower() in _UNKNOWN:
            ctx.skip("never started")
            return None
        try:
            if "Elapsed" in header:
                work = parse_elapsed(cell("Elapsed"), "Elapsed")
            else:
                end_text = cell("End")
                if end_text.lower() in _UNKNOWN:
                    ctx.skip("still running (no End)")
                    return None
                work = parse_timestamp(end_text, "End") - parse_timestamp(start_text, "Start")
        except ValueError as exc:
            ctx.diags.add(number, col("Elapsed" if "Elapsed" in header else "End"), str(exc))
            return None
        try:
            gpus, gpu_type, nodes = self._gpus(cell)
        except ValueError as exc:
            ctx.diags.add(number, col(_gpu_field(header)), str(exc))
            return None
        if gpus <= 0:
            ctx.skip("no GPUs")
            return None
        if work == 0:
            ctx.skip("zero run time")
            return None
        problem = duration_problem("run time", work)
        bad_work = ctx.refuse(
            number, problem, lambda: col("Elapsed" if "Elapsed" in header else "End")
        )
        problem = gpus_problem("gpus", gpus)
        if bad_work | ctx.refuse(number, problem, lambda: col(_gpu_field(header))):
            return None
        if "NNodes" in header and cell("NNodes"):
            try:
                nodes = parse_int(cell("NNodes"), "NNodes")
            except ValueError as exc:
                ctx.diags.add(number, col("NNodes"), str(exc))
                return None
        gpn = gpus // nodes if nodes and nodes > 0 and gpus % nodes == 0 else None
        user = cell("User")
        source = {"account": "Account", "partition": "Partition", "qos": "QOS", "user": "User"}
        account = cell(source[self.account_from]) or self.default_account
        klass = cell("QOS") or cell("Partition") or None
        if "State" in header and cell("State").upper().startswith("RUNNING"):
            ctx.note("running when sacct ran (run time so far)")
        return RawJob(
            submit=submit,
            id=job_id,
            account=account,
            gpus=gpus,
            work=work,
            user=user,
            gpus_per_node=gpn,
            gpu_type=gpu_type,
            klass=klass,
            line=number,
        )

    def _gpus(self, get: Callable[[str], str]) -> tuple[int, str | None, int | None]:
        for name in _TRES_FIELDS:
            tres = get(name)
            if not tres:
                continue
            for key, value in _GPU_ANY.findall(tres):  # 'gres/gpu=nan' is no "no GPUs"
                if not value.isdigit():
                    raise ValueError(f"{name}: {key}={value!r} is not a whole number of GPUs")
            nodes_m = _NODES.search(tres)
            nodes = int(nodes_m.group(1)) if nodes_m else None
            typed = _GPU_TYPED.findall(tres)
            plain = _GPU_PLAIN.search(tres)
            gpu_type = typed[0][0] if len(typed) == 1 else None
            if plain:
                return int(plain.group(1)), gpu_type, nodes
            if typed:
                return sum(int(n) for _, n in typed), gpu_type, nodes
            return 0, None, nodes
        for name in _GRES_FIELDS:
            gres = get(name)
            if gres:
                found = _GRES.findall(gres)
                types = {t for t, _ in found if t}
                return (
                    sum(int(n) for _, n in found),
                    (types.pop() if len(types) == 1 else None),
                    None,
                )
        return 0, None, None


def _gpu_field(header: dict[str, int]) -> str:
    """The column the GPU count was read from (the first TRES or GRES field present)."""
    return next(f for f in (*_TRES_FIELDS, *_GRES_FIELDS) if f in header)
