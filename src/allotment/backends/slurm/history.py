"""Finished runs from ``sacct`` (Slurm 22.05 ``--json``), for the ledger's backfill after an
outage: a job that started and ended while the reconciler was down is charged all the same.

``-D`` lists every run of a requeued job (each is a ledger run of its own, keyed by its start),
``-X`` the allocation only (not its steps), ``-a`` every user.  Times in the JSON are Unix
seconds on slurmctld's clock, like ``squeue --json``; ``-S`` is written in local time, the way
``sacct`` reads it, and the result is filtered again by ``end`` here.
"""

from __future__ import annotations

import json
import time
from typing import Any

from allotment.backends.policy import UNALLOCATED_QOS
from allotment.backends.protocol import FinishedRun
from allotment.config.hostlist import expand_hostlist
from allotment.errors import BackendError

ENDED_STATES = "CA,CD,F,NF,OOM,PR,RQ,TO,DL,BF"


def sacct_argv(since: float) -> list[str]:
    start = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(since))
    return ["sacct", "-a", "-X", "-D", "-S", start, "-E", "now", "-s", ENDED_STATES, "--json"]


def parse_sacct_json(
    text: str, since: float, exempt_by_qos: dict[str, int]
) -> tuple[FinishedRun, ...]:
    """Runs that started and ended, with ``end >= since``, oldest end first."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BackendError(f"sacct --json printed something that is not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("jobs", []), list):
        raise BackendError("sacct --json: no jobs list")
    out = []
    for j in data.get("jobs", []):
        if not isinstance(j, dict):
            continue
        t: dict[str, Any] = j.get("time") or {}
        start, end = t.get("start") or 0, t.get("end") or 0
        if not start or not end or end < since or end < start:
            continue
        qos = str(j.get("qos") or "").lower()
        nodes = str(j.get("nodes") or "")
        out.append(
            FinishedRun(
                id=str(j["job_id"]),
                user=str(j.get("user") or "").lower(),
                account=str(j.get("account") or "").lower(),
                qos=qos,
                gpus=_gpus((j.get("tres") or {}).get("allocated") or []),
                start=float(start),
                end=float(end),
                min_runtime_s=0 if qos == UNALLOCATED_QOS else exempt_by_qos.get(qos),
                nodes=expand_hostlist(nodes) if nodes and nodes != "None assigned" else (),
            )
        )
    return tuple(sorted(out, key=lambda r: (r.end, r.start, len(r.id), r.id)))


def _gpus(tres: list[dict[str, Any]]) -> int:
    return sum(
        int(x.get("count") or 0)
        for x in tres
        if isinstance(x, dict)
        and x.get("type") == "gres"
        and str(x.get("name", "")).startswith("gpu")
    )
