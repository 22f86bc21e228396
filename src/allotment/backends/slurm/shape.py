"""A job's GPU shape from one ``squeue --json`` record (Slurm 22.05), for every way ``sbatch``
asks for GPUs: ``--gres=gpu[:type]:N`` (per node), ``--gpus[-per-job]=N``, ``--gpus-per-node=N``,
``--gpus-per-task=N``, each with ``-N``/``-n``/``--ntasks-per-node``.

Why the TRES strings first: Slurm has already multiplied the request out.  ``tres_req_str``
(``...,node=2,billing=16,gres/gpu=16``) holds the whole job's GPUs while it is pending and
``tres_alloc_str`` what it holds while it runs, whatever option asked for them.  Reading
``tres_per_node`` alone (``gres:gpu:8``) made a pending ``-N 2 --gres=gpu:8`` job 8 GPUs
instead of 16.  The per-option fields are only a fallback, multiplied by the node or task count
the way Slurm does.  ``gres_detail`` gives a running job's GPUs on each of its nodes
(``['gpu:8(IDX:0-7)', 'gpu:4(IDX:0-3)']`` for ``-N 2 --gpus=12``).  Real records of each shape
are kept in ``tests/backends/fixtures/squeue_shapes.json``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TRES_GPU = re.compile(r"(?:^|,)gres/gpu=(\d+)")
_GRES = re.compile(r"gpu(?::[A-Za-z0-9_.-]+)?:(\d+)")
UNLIMITED_MIN = 0xFFFFFFFE  # 22.05 prints INFINITE time limits as 2^32-1 (and NO_VAL as -2)


@dataclass(frozen=True, slots=True)
class Shape:
    gpus: int  # the whole job
    gpus_per_node: int | None  # None: one node, or an uneven split Slurm chooses
    node_gpus: tuple[int, ...]  # a running job's GPUs per node, in the order of its nodes


def gpus_in(gres: str) -> int:
    """``gpu:8``, ``gpu:a100:4,gpu:h100:4``, ``gpu:h100:3(IDX:0-2)``, ``gres/gpu=4`` -> GPU
    count (a TRES string's ``gres/gpu=`` is already the total; typed entries repeat it)."""
    m = _TRES_GPU.search(gres)
    if m:
        return int(m.group(1))
    return sum(_counts(gres))


def requested_gpus(gres: str) -> int:
    """One request field (``tres_per_node``...): ``--gres=gpu:2 --gpus-per-node=2`` shows as
    ``gres:gpu:2,gres:gpu:2``, the same request twice, so the largest entry counts, not the sum."""
    return max(_counts(gres), default=0)


def _counts(gres: str) -> list[int]:
    return [int(n) for n in _GRES.findall(re.sub(r"\([^)]*\)", "", gres))]


def job_shape(j: Mapping[str, Any], running: bool) -> Shape:
    nodes = max(1, _int(j.get("node_count")))
    tasks = max(1, _int(j.get("tasks")))
    held = gpus_in(str(j.get("tres_alloc_str") or "")) if running else 0
    total = held or gpus_in(str(j.get("tres_req_str") or "")) or _from_options(j, nodes, tasks)
    per_node = requested_gpus(str(j.get("tres_per_node") or ""))
    detail = tuple(gpus_in(str(d)) for d in j.get("gres_detail") or ())
    if not running or sum(detail) != total:
        detail = ()
    if not per_node and nodes > 1 and total % nodes == 0:
        per_node = total // nodes
    return Shape(total, per_node or None, detail)


def _from_options(j: Mapping[str, Any], nodes: int, tasks: int) -> int:
    if g := requested_gpus(str(j.get("tres_per_job") or "")):
        return g
    if g := requested_gpus(str(j.get("tres_per_node") or "")):
        return g * nodes
    return requested_gpus(str(j.get("tres_per_task") or "")) * tasks


def time_limit_s(j: Mapping[str, Any]) -> float | None:
    """``time_limit`` is in minutes; unlimited (and unset) is None."""
    minutes = _int(j.get("time_limit"))
    return None if minutes <= 0 or minutes >= UNLIMITED_MIN else minutes * 60.0


def _int(v: object) -> int:
    try:
        return int(v)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return 0
