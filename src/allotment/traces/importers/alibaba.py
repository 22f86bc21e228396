"""Alibaba GPU cluster trace v2023 ("openb", Weng et al., ATC '23): pods of a GPU cluster.

Columns ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time`` (seconds from trace start).  A pod becomes a job:

* ``submit`` = creation_time; ``work`` = deletion_time - scheduled_time (its run time);
* ``gpus`` = num_gpu on one node (``gpus_per_node`` = gpus: a pod never spans nodes);
  GPU-sharing pods (``gpu_milli`` < 1000) are rounded up to one whole GPU (``fractional="round"``,
  noted in the summary) or skipped (``fractional="skip"``);
* ``gpu_spec`` with one type -> ``gpu_type``; several allowed types -> no constraint (noted);
* ``qos`` -> ``klass`` (the fill rules map BE to unallocated work) and, by default, the account
  (``account_from="qos"``; ``"single"`` puts every pod in one account);
* skipped (counted): CPU-only pods, pods never scheduled (Pending), zero run time.
* Pods still running when the trace ends have a truncated run time (noted, kept).

The node list (``*node_list_gpu_node.csv`` next to the pod list, or ``node_list``) gives the
cluster: one node group per (GPU model, GPUs per node).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from allotment.errors import TraceError
from allotment.traces.bounds import duration_problem, gpus_problem
from allotment.traces.importers.base import ImportContext, NodeGroupShape, RawJob
from allotment.traces.source import open_text

POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)


@dataclass(frozen=True, slots=True)
class AlibabaImporter:
    fractional: Literal["round", "skip"] = "round"
    account_from: Literal["qos", "single"] = "qos"
    single_account: str = "alibaba"
    node_list: Path | None = None
    name: str = "alibaba-gpu"

    def read(self, path: Path, ctx: ImportContext) -> Iterator[RawJob]:
        with open_text(path, ctx.diags) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None or [h.strip() for h in header] != list(POD_COLUMNS):
                ctx.diags.add(1, 1, f"expected the Alibaba pod-list header {','.join(POD_COLUMNS)}")
                return
            for row in reader:
                number = reader.line_num
                ctx.records += 1
                job = self._job(number, row, ctx)
                if job is None:
                    continue
                if row[7] == "Running":
                    ctx.note("running at trace end (run time truncated)")
                yield job
        self._cluster(path, ctx)

    def _job(self, number: int, row: list[str], ctx: ImportContext) -> RawJob | None:
        if len(row) != len(POD_COLUMNS):
            ctx.diags.add(number, 1, f"expected {len(POD_COLUMNS)} columns, got {len(row)}")
            return None
        cols = dict(zip(POD_COLUMNS, row, strict=True))
        try:
            num_gpu = _int(cols, "num_gpu", row)
            gpu_milli = _int(cols, "gpu_milli", row)
            created = _int(cols, "creation_time", row)
            deleted = _int(cols, "deletion_time", row)
            scheduled = (
                None if not cols["scheduled_time"].strip() else _int(cols, "scheduled_time", row)
            )
        except _Bad as bad:
            ctx.diags.add(number, bad.col, bad.message)
            return None
        if num_gpu <= 0:
            ctx.skip("CPU-only pod")
            return None
        if scheduled is None:
            ctx.skip("never scheduled (Pending)")
            return None
        if num_gpu == 1 and 0 < gpu_milli < 1000:
            if self.fractional == "skip":
                ctx.skip("GPU-sharing pod (fractional GPU)")
                return None
            ctx.note("GPU-sharing pod rounded up to 1 GPU")
        work = deleted - scheduled
        if work == 0:
            ctx.skip("zero run time")
            return None
        problem = duration_problem("run time", work)
        refused = ctx.refuse(number, problem, lambda: _col_of(row, "deletion_time"))
        problem = gpus_problem("gpus", num_gpu)
        if refused | ctx.refuse(number, problem, lambda: _col_of(row, "num_gpu")):
            return None
        specs = [s for s in cols["gpu_spec"].split("|") if s.strip()]
        if len(specs) > 1:
            ctx.note("several allowed GPU types: left unconstrained")
        qos = cols["qos"].strip() or None
        account = self.single_account if self.account_from == "single" else (qos or "unknown")
        return RawJob(
            submit=float(created),
            id=cols["name"],
            account=account,
            gpus=num_gpu,
            work=float(work),
            gpus_per_node=num_gpu,
            gpu_type=specs[0] if len(specs) == 1 else None,
            klass=qos,
            line=number,
        )

    def _cluster(self, path: Path, ctx: ImportContext) -> None:
        node_list = self.node_list
        if node_list is None:
            found = sorted(path.parent.glob("*node_list_gpu_node.csv"))
            node_list = found[0] if found else None
        if node_list is None:
            return
        shapes: Counter[tuple[str, int]] = Counter()
        with open_text(node_list) as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or not {"gpu", "model"} <= set(reader.fieldnames):
                raise TraceError(f"{node_list}: expected a node list with columns sn,...,gpu,model")
            for row in reader:
                try:
                    gpus = int(row["gpu"])
                except (TypeError, ValueError):
                    raise TraceError(
                        f"{node_list}:{reader.line_num}:1: gpu must be an integer"
                    ) from None
                if gpus > 0:
                    shapes[(row["model"] or "gpu", gpus)] += 1
        ctx.cluster = tuple(NodeGroupShape(m, g, n) for (m, g), n in sorted(shapes.items()))
        ctx.cluster_source = f"node list {node_list.name}"


class _Bad(Exception):
    def __init__(self, col: int, message: str) -> None:
        self.col, self.message = col, message


def _col_of(row: list[str], key: str) -> int:
    """Column = 1 + length of the preceding fields and commas (exact for unquoted CSV)."""
    return 1 + sum(len(c) + 1 for c in row[: POD_COLUMNS.index(key)])


def _int(cols: dict[str, str], key: str, row: list[str]) -> int:
    text = cols[key].strip()
    try:
        return int(text)
    except ValueError:
        raise _Bad(_col_of(row, key), f"{key} must be an integer, got {text!r}") from None
