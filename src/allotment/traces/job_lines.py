"""Job, node and header lines: the straight-line fast path and the full checker.

Well-formed job lines take ``fast_job``; anything unusual goes through ``checked_job``, which
explains what is wrong.  The property test ``test_fast_path_agrees_with_the_full_checker``
keeps the two equal, the bounds included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from allotment.core.jobs import JOB_KINDS, JobSpec, NodeEvent
from allotment.traces.bounds import (
    MAX_DURATION_S,
    MAX_GPUS,
    MAX_TIME_S,
    duration_ok,
    gpus_ok,
    priority_problem,
    time_ok,
)
from allotment.traces.format import (
    FORMAT_VERSION,
    HEADER_FIELDS,
    JOB_FIELDS,
    NODE_FIELDS,
    NODE_STATES,
    REQUIRED_JOB_FIELDS,
)
from allotment.traces.idcheck import IdIndex
from allotment.traces.job_fit import JobFit
from allotment.traces.line_checker import LineChecker, col_of, kind_of


def _optional(d: Mapping[str, Any], key: str) -> bool:
    return d.get(key) is not None


_JOB_KEYS = frozenset(("type", *JOB_FIELDS))
_KINDS = frozenset(JOB_KINDS)


def _or(value: Any, default: Any) -> Any:
    """null means absent, as in the full checker."""
    return default if value is None else value


def fast_job(d: dict[str, Any]) -> JobSpec | None:
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


def parse_job(
    c: LineChecker, d: dict[str, Any], ids: IdIndex, fit: JobFit | None
) -> JobSpec | None:
    job = fast_job(d) or checked_job(c, d)
    if job is None:
        return None
    ids.add(job.id, c.line)
    for dep in job.depends_on:
        ids.depend(job.id, dep, c.line, col_of(c.raw, "depends_on"))
    if fit is not None:
        for p in fit.problems(job):
            c.err(p.key, p.message)
    return job if c.ok else None


def checked_job(c: LineChecker, d: dict[str, Any]) -> JobSpec | None:
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
            c.err("resumable", f"resumable must be true or false, got {kind_of(d['resumable'])}")
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
            c.err("kind", f"kind must be one of {', '.join(JOB_KINDS)}, got {kind_of(k)}")
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


def parse_node(c: LineChecker, d: dict[str, Any]) -> NodeEvent | None:
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
        c.err("state", f"state must be 'unhealthy' or 'healthy', got {kind_of(state)}")
    if not c.ok or time is None or node is None:
        return None
    return NodeEvent(time=time, node=node, state=state)


def check_header(c: LineChecker, d: dict[str, Any]) -> None:
    c.unknown(d, HEADER_FIELDS, "header")
    v = d.get("version", FORMAT_VERSION)
    if v != FORMAT_VERSION:
        c.err("version", f"unsupported trace format version {v!r}; this allot reads version 1")
