"""The ``sacctmgr`` and ``scontrol`` command lines for each action (pure; argv lists, no shell).

``allot compile --target slurm`` prints the same command lines that the backend runs, so a site
can apply the policy by hand and get what the reconciler would have made.  Every ``sacctmgr``
call carries ``-i``: without it sacctmgr waits for a "commit?" answer and, with stdin closed,
prints "Y or N please" forever (NOTES pitfall 5).
"""

from __future__ import annotations

import time

from allotment.backends.actions import DRAIN_PREFIX, ClusterAction, PolicyAction
from allotment.backends.policy import AccountSpec, QosSpec, UserSpec
from allotment.backends.slurm.parse import HOLD_MARK, HOLD_S, exempt_text

SACCTMGR = ("sacctmgr", "-i")


def qos_settings(q: QosSpec, *, for_add: bool) -> list[str]:
    """``KEY=VALUE`` words; on modify, empty values clear a setting (``Preempt=``, exempt -1)."""
    out = [f"Priority={q.priority}"]
    if q.preempt or not for_add:
        out.append(f"Preempt={','.join(q.preempt)}")
    out.append(f"PreemptMode={q.preempt_mode}")
    if q.preempt_exempt_s:
        out.append(f"PreemptExemptTime={exempt_text(q.preempt_exempt_s)}")
    elif not for_add:
        out.append("PreemptExemptTime=-1")
    out.append(f"UsageFactor={q.usage_factor:g}")
    return out


def qos_from_action(a: PolicyAction) -> QosSpec:
    return QosSpec.from_fields(a.target, dict(a.fields))


def add_qos(q: QosSpec) -> list[str]:
    return [*SACCTMGR, "add", "qos", q.name, *qos_settings(q, for_add=True)]


def modify_qos(q: QosSpec) -> list[str]:
    return [
        *SACCTMGR,
        "modify",
        "qos",
        "where",
        f"name={q.name}",
        "set",
        *qos_settings(q, for_add=False),
    ]


def add_account(a: AccountSpec) -> list[str]:
    argv = [*SACCTMGR, "add", "account", a.name, f"parent={a.parent}", f"fairshare={a.fairshare}"]
    if a.max_gpus is not None:
        argv.append(grp_tres(a.max_gpus))
    return argv


def grp_tres(max_gpus: int | None) -> str:
    """The budget node's ``max_gpus`` as a GPU limit on its association; ``-1`` clears it."""
    return f"GrpTRES=gres/gpu={-1 if max_gpus is None else max_gpus}"


def account_from_action(a: PolicyAction) -> AccountSpec:
    f = dict(a.fields)
    cap = f.get("max_gpus", "")
    return AccountSpec(a.target, f["parent"], int(f["fairshare"]), int(cap) if cap else None)


def modify_account(
    name: str,
    *,
    fairshare: int | None = None,
    parent: str | None = None,
    max_gpus: tuple[int | None] | None = None,
) -> list[str]:
    """Only the settings given change; ``max_gpus=(None,)`` clears the cap."""
    sets = []
    if fairshare is not None:
        sets.append(f"fairshare={fairshare}")
    if parent is not None:
        sets.append(f"parent={parent}")
    if max_gpus is not None:
        sets.append(grp_tres(max_gpus[0]))
    return [*SACCTMGR, "modify", "account", "where", f"name={name}", "set", *sets]


def add_user(name: str, accounts: tuple[str, ...], default_account: str) -> list[str]:
    return [
        *SACCTMGR,
        "add",
        "user",
        name,
        f"account={','.join(accounts)}",
        f"defaultaccount={default_account}",
    ]


def set_default_account(name: str, account: str) -> list[str]:
    return [
        *SACCTMGR,
        "modify",
        "user",
        "where",
        f"name={name}",
        "set",
        f"defaultaccount={account}",
    ]


def set_user_qos(u: UserSpec) -> list[str]:
    """QOS on the user's associations in ``u.accounts`` only (never their other associations)."""
    return [
        *SACCTMGR,
        "modify",
        "user",
        "where",
        f"name={u.name}",
        f"account={','.join(u.accounts)}",
        "set",
        f"qos={','.join(u.qos)}",
        f"defaultqos={u.default_qos}",
    ]


def delete_user(name: str, accounts: str) -> list[str]:
    return [*SACCTMGR, "delete", "user", "where", f"name={name}", f"account={accounts}"]


def delete_account(name: str) -> list[str]:
    return [*SACCTMGR, "delete", "account", "where", f"name={name}"]


def delete_qos(name: str) -> list[str]:
    return [*SACCTMGR, "delete", "qos", "where", f"name={name}"]


def user_from_action(a: PolicyAction) -> UserSpec:
    f = dict(a.fields)
    return UserSpec(
        a.target,
        tuple(f["accounts"].split(",")),
        f["default_account"],
        tuple(x for x in f["qos"].split(",") if x),
        f["default_qos"],
    )


CANCEL_MARK = "allotment: cancelled"


def cluster_commands(a: ClusterAction) -> list[list[str]]:
    """The command lines of one action, in order.  A cancel first writes why into the job's
    ``AdminComment`` (``sacct -o AdminComment`` keeps it after the job is gone), so the user
    who asks why their job went finds the rule and the reason on the job itself, not only in
    the reconciler's audit log."""
    if a.kind == "cancel":
        why = f"{CANCEL_MARK} ({a.rule}): {a.reason}"[:200]
        return [["scontrol", "update", f"JobId={a.target}", f"AdminComment={why}"], cluster_command(a)]
    return [cluster_command(a)]


# Slurm's refusals of a start's update that reached a job already running: the update did not
# take effect, whatever a re-read shows afterwards.  ESLURM_JOB_NOT_PENDING, or, with
# ``SchedulerParameters=disable_job_shrink`` (docs/operators-guide.md), ESLURM_NOT_SUPPORTED:
# Slurm reads ``ReqNodeList`` on a running job as a request to shrink it to those nodes, which
# that parameter refuses (without it, a same-node list leaves a RESIZING accounting record and a
# smaller one shrinks the job; tests/slurm/test_stale_read_slurm.py)
NOT_PENDING = ("Job is no longer pending execution", "Requested operation not supported")

NOTICE_SIGNAL = "TERM"  # what Slurm's own GraceTime sends at a preemption (docs/design/interactive.md)


def cluster_command(a: ClusterAction) -> list[str]:
    if a.kind == "notify":
        # the notice of GraceTime semantics, sent by the reconciler: every step and the batch
        # shell get SIGTERM now; the requeue follows when the grace has passed (reconcile.grace)
        return ["scancel", f"--signal={NOTICE_SIGNAL}", "--full", a.target]
    if a.kind == "requeue":
        return ["scontrol", "requeue", a.target]
    if a.kind == "cancel":
        return ["scancel", a.target]
    if a.kind == "set_priority":
        return set_priority(a)
    if a.kind == "drain":
        reason = f"{DRAIN_PREFIX} {a.reason}"[:120]
        return ["scontrol", "update", f"NodeName={a.target}", "State=DRAIN", f"Reason={reason}"]
    return ["scontrol", "update", f"NodeName={a.target}", "State=RESUME"]


def set_priority(a: ClusterAction) -> list[str]:
    """One ``scontrol update``, so the priority, the release or hold and the pin land together:
    a job released first and pinned after could be started by Slurm in between on nodes of its
    own choosing.  ``StartTime=now`` ends the hold ``job_submit.lua`` gives new jobs (their
    begin time ``HOLD_S`` out); a hold puts the begin time ``HOLD_S`` after the job's real
    eligibility, marked so ``parse`` reads that back; ``ReqNodeList=`` (empty) clears a pin."""
    argv = ["scontrol", "update", f"JobId={a.target}", f"Priority={a.value}"]
    if a.release:
        argv.append("StartTime=now")
    if a.hold_eligible is not None:
        argv += [f"StartTime={slurm_time(a.hold_eligible + HOLD_S)}", f"AdminComment={HOLD_MARK}"]
    if a.nodes is not None:
        argv.append(f"ReqNodeList={','.join(a.nodes)}")
    return argv


def slurm_time(unix_s: float) -> str:
    """Slurm's absolute time format, in the local time zone scontrol reads it in."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(round(unix_s)))
