"""Turn Slurm 22.05 client output into ``backends.policy`` and ``backends.protocol`` values (pure).

Where 22.05 has JSON (``squeue --json``, ``sinfo --json``) it is used; ``sacctmgr`` has none,
so its ``-n -P`` output (``|``-separated, no header) is read by column position, with the
format string that produced it kept next to the parser in ``*_FORMAT`` so the two cannot drift
apart.  Names are lower-cased (Slurm does so itself, NOTES pitfall 7).
"""

from __future__ import annotations

import json
import re
from typing import Any

from allotment.backends.policy import SLURM_ROOT, UNALLOCATED_QOS, AccountSpec, QosSpec, UserSpec
from allotment.backends.protocol import JobObs, NodeObs
from allotment.backends.slurm.shape import gpus_in, job_shape, time_limit_s
from allotment.config.hostlist import expand_hostlist
from allotment.errors import BackendError

QOS_FORMAT = "name,priority,preempt,preemptmode,preemptexempttime,usagefactor"
ASSOC_FORMAT = "account,parentname,user,fairshare,qos,defaultqos,grptres"
USER_FORMAT = "user,defaultaccount"
# job_submit.lua (next to this file) marks each new job it holds for the reconciler with this
HOLD_MARK = "allotment: waits for the reconciler"
COMMENT_PRIORITY = "allot.priority"  # sbatch --comment "allot.priority=5": the declared priority
HOLD_S = 10 * 365 * 86400  # a held job's begin time lies this far after its real eligibility


def exempt_seconds(text: str) -> int:
    """``[D-]HH:MM:SS`` (or ``MM:SS``) to seconds; empty means no exemption (0)."""
    t = text.strip()
    if not t:
        return 0
    days = 0
    if "-" in t:
        d, t = t.split("-", 1)
        days = int(d)
    parts = [int(p) for p in t.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts
    return days * 86400 + h * 3600 + m * 60 + s


def exempt_text(seconds: int) -> str:
    """Seconds to Slurm's ``[D-]HH:MM:SS``."""
    d, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    hms = f"{h:02d}:{m:02d}:{s:02d}"
    return f"{d}-{hms}" if d else hms


def _rows(text: str, ncols: int, what: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split("|")
        if len(cols) < ncols:
            raise BackendError(f"unexpected {what} line from sacctmgr: {line!r}")
        out.append(cols[:ncols])
    return out


def parse_qos(text: str) -> tuple[QosSpec, ...]:
    out = []
    for name, prio, preempt, mode, exempt, factor in _rows(text, 6, "QOS"):
        out.append(
            QosSpec(
                name=name.lower(),
                priority=int(prio or 0),
                preempt=tuple(sorted(p.lower() for p in preempt.split(",") if p)),
                preempt_exempt_s=exempt_seconds(exempt),
                usage_factor=float(factor or 1.0),
                preempt_mode=mode.lower() or "off",
            )
        )
    return tuple(sorted(out))


def parse_assoc(
    assoc_text: str, user_text: str
) -> tuple[tuple[AccountSpec, ...], tuple[UserSpec, ...]]:
    """Accounts (rows without a user) and users (their associations gathered per user).

    A user whose associations (outside Slurm's ``root`` account) disagree on QOS is reported with QOS ``("<mixed>",)`` so the diff
    sees a difference and sets them all again."""
    defaults = {u.lower(): d.lower() for u, d in _rows(user_text, 2, "user")}
    accounts: list[AccountSpec] = []
    per_user: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}
    for account, parent, user, share, qos, dqos, grp in _rows(assoc_text, 7, "association"):
        acct = account.lower()
        if not user:
            cap = gpus_in(grp) if "gres/gpu=" in grp else None
            accounts.append(AccountSpec(acct, parent.lower(), _fairshare(share), cap))
            continue
        q = tuple(sorted(x.lower() for x in qos.split(",") if x))
        per_user.setdefault(user.lower(), []).append((acct, q, dqos.lower()))
    users = []
    for name, assocs in sorted(per_user.items()):
        # Slurm's own root account is never managed: its association keeps its own QOS
        ours = [x for x in assocs if x[0] != SLURM_ROOT] or assocs
        qos_set = {q for _, q, _ in ours}
        dqos_set = {d for _, _, d in ours}
        uqos = qos_set.pop() if len(qos_set) == 1 else ("<mixed>",)
        dqos = dqos_set.pop() if len(dqos_set) == 1 else "<mixed>"
        accts = tuple(sorted(a for a, _, _ in assocs))
        users.append(UserSpec(name, accts, defaults.get(name, ""), uqos, dqos))
    return tuple(sorted(accounts)), tuple(users)


def _fairshare(text: str) -> int:
    """``parent`` (share with the parent) is shown as the word; treat it as 0 so it differs."""
    return int(text) if text.strip().lstrip("-").isdigit() else 0


def parse_sinfo_json(text: str) -> tuple[NodeObs, ...]:
    data = _json(text, "sinfo")
    out = []
    for n in data.get("nodes", []):
        state = str(n.get("state", "")).lower()
        flags = {str(f).upper() for f in n.get("state_flags", [])}
        out.append(
            NodeObs(
                name=str(n["name"]),
                gpus=gpus_in(str(n.get("gres", ""))),
                gpus_used=gpus_in(str(n.get("gres_used", ""))),
                drain="DRAIN" in flags or state in ("drained", "draining"),
                down=state in ("down", "unknown", "error", "future") or "NOT_RESPONDING" in flags,
                reason=str(n.get("reason", "")),
            )
        )
    return tuple(sorted(out, key=lambda n: n.name))


def parse_squeue_json(text: str, exempt_by_qos: dict[str, int]) -> tuple[JobObs, ...]:
    """Running and pending jobs; others (completing, held by a requeue...) are left out
    except pending ones.  ``exempt_by_qos`` maps a tier QOS to its minimum runtime."""
    data = _json(text, "squeue")
    out = []
    for j in data.get("jobs", []):
        state = str(j.get("job_state", "")).upper()
        if state not in ("RUNNING", "PENDING"):
            continue
        qos = str(j.get("qos", "")).lower()
        shape = job_shape(j, running=state == "RUNNING")
        nodes_field = str(j.get("nodes") or "")
        min_rt: int | None = 0 if qos == UNALLOCATED_QOS else exempt_by_qos.get(qos)
        out.append(
            JobObs(
                id=str(j["job_id"]),
                user=str(j.get("user_name", "")).lower(),
                account=str(j.get("account", "")).lower(),
                qos=qos,
                gpus=shape.gpus,
                state="running" if state == "RUNNING" else "pending",
                submit=float(j.get("submit_time") or 0),
                start=float(j["start_time"]) if state == "RUNNING" else None,
                min_runtime_s=min_rt,
                resumable=bool(j.get("requeue", True)),
                priority=int(j.get("priority") or 0),
                nodes=expand_hostlist(nodes_field) if state == "RUNNING" and nodes_field else (),
                eligible=_eligible(j) if state == "PENDING" else None,
                gpus_per_node=shape.gpus_per_node,
                node_gpus=shape.node_gpus,
                time_limit_s=time_limit_s(j),
                restarts=int(j.get("restart_cnt") or 0),
                reason=str(j.get("state_reason") or "") if state == "PENDING" else "",
                partition=str(j.get("partition") or ""),
                kind=declared_kind(str(j.get("comment") or "")),
                declared_priority=declared_priority(j),
                deadline=_number(j.get("deadline")) or None,
                depends_on=job_dependencies(str(j.get("dependency") or "")),
            )
        )
    return tuple(sorted(out, key=lambda j: (len(j.id), j.id)))


_KIND = re.compile(r"(?:^|[\s,;])kind=([a-z]+)(?=$|[\s,;])")


def declared_kind(comment: str) -> str | None:
    """The kind a user declared on a Slurm job (``--comment kind=interactive``); None when the
    comment declares none."""
    m = _KIND.search(comment)
    return m.group(1) if m else None


def declared_priority(j: dict[str, Any]) -> int:
    """The job's declared within-team priority: ``allot.priority=N`` in its comment (``sbatch
    --comment``), else minus its ``--nice`` (Slurm's nice lowers a job's priority; a user may
    only raise it, an operator lower it).  Not Slurm's computed ``priority``: in active mode the
    reconciler writes that one, and it mixes in Slurm's own factors."""
    for word in str(j.get("comment") or "").replace(",", " ").split():
        key, sep, value = word.partition("=")
        if sep and key == COMMENT_PRIORITY:
            try:
                return max(-(2**31), min(2**31 - 1, int(value)))
            except ValueError:
                break  # not a number: fall back to nice, as if not given
    return -int(_number(j.get("nice")))


_DEPENDENCY = re.compile(r"([a-z]+):([^(,?]+)(?:\(([a-z]+)\))?")


def job_dependencies(text: str) -> tuple[str, ...]:
    """The jobs a job still waits for, from squeue's ``dependency`` field (``sbatch
    --dependency=afterok:12:13,afterany:14`` shows as ``afterok:12(unfulfilled),afterok:13(...)``
    ...; ``?`` separates the alternatives of an "any of" list): every ``after*`` and ``aftercorr``
    job id (an array's ``12_*`` or ``12_3`` as its job ``12``, a hetjob's ``12+1`` as ``12``),
    each once, in the order given.  Slurm drops a dependency from the field once it is met, so
    what is left is what the job waits for; one that can no longer be met (``(failed)``) is
    left out: the job will never run, so it lends no urgency.  ``singleton`` names no job, and
    ``(null)`` or an empty field none."""
    out: list[str] = []
    for kind, ids, state in _DEPENDENCY.findall(text.strip().lower()):
        if not kind.startswith("after") or state == "failed":
            continue
        for part in ids.split(":"):
            job = part.split("_", 1)[0].split("+", 1)[0].strip()
            if job.isdigit() and job not in out:
                out.append(job)
    return tuple(out)


def _number(v: object) -> float:
    """A 22.05 JSON number; a later release's ``{"set", "number"}`` object too; else 0."""
    if isinstance(v, dict):
        v = v.get("number", 0) if v.get("set", True) and not v.get("infinite", False) else 0
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _eligible(j: dict[str, Any]) -> float | None:
    """When a pending job may start.  A job held for the reconciler carries ``HOLD_MARK`` and a
    begin time ``HOLD_S`` after its real eligibility (``job_submit.lua`` for a new job, the
    reconciler's hold after a requeue).  A never-run marked job is startable for the core at
    once and ages from its submission, as in the simulator: the hold only keeps Slurm from
    starting it on nodes of its own choosing before the core starts it.  A requeued one is
    eligible when Slurm's requeue delay ends, as if it were not held."""
    at = float(j.get("eligible_time") or 0)
    if not str(j.get("admin_comment") or "").startswith(HOLD_MARK):
        return at
    if not int(j.get("restart_cnt") or 0):
        return None
    return at - HOLD_S if at - float(j.get("submit_time") or 0) > HOLD_S / 2 else at


def _json(text: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BackendError(f"{what} --json printed something that is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BackendError(f"{what} --json printed {type(data).__name__}, expected an object")
    errors = data.get("errors") or []
    if errors:
        raise BackendError(f"{what} reported errors: {errors}")
    return data
