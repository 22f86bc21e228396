"""Is an action already carried out?  The "check" half of check-then-act, shared by backends.

A backend asks this before it acts (skip what is already true: ``unchanged``) and again after a
write failed or timed out (the write may have taken effect: then it is ``applied``, and it is
not run a second time).
"""

from __future__ import annotations

from allotment.backends.actions import ClusterAction, PolicyAction, start_key
from allotment.backends.policy import PolicyState
from allotment.backends.protocol import Observation


def policy_done(a: PolicyAction, st: PolicyState) -> bool:
    f = dict(a.fields)
    if a.kind in ("add_qos", "modify_qos"):
        q = next((q for q in st.qos if q.name == a.target), None)
        return (
            q is not None
            and q.priority == int(f["priority"])
            and ",".join(q.preempt) == f["preempt"]
            and q.preempt_exempt_s == int(f["preempt_exempt_s"])
            and f"{q.usage_factor:g}" == f["usage_factor"]
            and q.preempt_mode == f["preempt_mode"]
        )
    if a.kind in ("add_account", "modify_account"):
        acct = st.account(a.target)
        cap = f.get("max_gpus", "")
        return (
            acct is not None
            and acct.parent == f["parent"]
            and acct.fairshare == int(f["fairshare"])
            and acct.max_gpus == (int(cap) if cap else None)
        )
    if a.kind in ("add_user", "modify_user"):
        u = next((u for u in st.users if u.name == a.target), None)
        return (
            u is not None
            and set(f["accounts"].split(",")) <= set(u.accounts)
            and u.default_account == f["default_account"]
            and ",".join(u.qos) == f["qos"]
            and u.default_qos == f["default_qos"]
        )
    if a.kind == "delete_qos":
        return all(q.name != a.target for q in st.qos)
    if a.kind == "delete_account":
        return st.account(a.target) is None
    u = next((u for u in st.users if u.name == a.target), None)
    drop = set((a.field("accounts") or "").split(","))
    return u is None or not (drop & set(u.accounts))


def cluster_done(a: ClusterAction, obs: Observation) -> bool:
    """True when nothing is left to do (including: the job is gone)."""
    if a.kind in ("drain", "resume"):
        node = obs.node(a.target)
        return node is not None and node.drain == (a.kind == "drain")
    job = obs.job(a.target)
    if job is None:
        return True
    if a.kind in ("requeue", "notify"):  # both pinned to the run they were planned against
        return (
            job.state != "running"
            or job.start is None
            or (bool(a.expect) and start_key(job.start) != a.expect)
        )
    if a.kind == "cancel":
        return False
    if job.state == "running":
        return True
    plain = a.nodes is None and not a.release and a.hold_eligible is None
    return plain and job.priority == a.value
