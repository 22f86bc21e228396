"""Pair desired with observed policy and list the actions that close the gap (pure, no I/O).

Only objects allotment manages are touched: accounts in the subtree of the config's root,
users with an association in such an account, and the contract QOS (``unallocated`` and
``alloc-*``).  Anything else on the cluster (Slurm's own ``root`` account, ``normal`` QOS, other
tenants' accounts) is invisible to the diff.

Pruning (deleting managed objects the config no longer names) is off by default: such objects
come back as ``prune_skipped`` so a person sees them.  With pruning on, a desired tree without a
single leaf below the root is refused: an empty or truncated config must never empty a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from allotment.backends.actions import PolicyAction
from allotment.backends.policy import SLURM_ROOT, UNALLOCATED_QOS, AccountSpec, PolicyState, QosSpec

RULE_SYNC = "policy-sync"
RULE_PRUNE = "prune"


@dataclass(frozen=True, slots=True)
class PolicyPlan:
    """``actions`` to apply in order; ``prune_skipped`` deletions withheld (prune off or refused)
    with ``prune_refused`` saying why when pruning was on but refused."""

    actions: tuple[PolicyAction, ...]
    prune_skipped: tuple[PolicyAction, ...]
    prune_refused: str = ""

    @property
    def empty(self) -> bool:
        return not self.actions


def managed_accounts(observed: PolicyState, root: str) -> tuple[AccountSpec, ...]:
    """``root`` and every observed account below it."""
    children: dict[str, list[AccountSpec]] = {}
    for a in observed.accounts:
        children.setdefault(a.parent, []).append(a)
    out: list[AccountSpec] = []
    stack = [a for a in observed.accounts if a.name == root]
    while stack:
        a = stack.pop()
        out.append(a)
        stack.extend(sorted(children.get(a.name, []), reverse=True))
    return tuple(out)


def is_managed_qos(name: str) -> bool:
    return name == UNALLOCATED_QOS or name.startswith("alloc-")


def _preorder(accounts: tuple[AccountSpec, ...]) -> dict[str, int]:
    """Position of each account in a parent-before-child walk (siblings by name)."""
    names = {a.name for a in accounts}
    kids: dict[str, list[str]] = {}
    for a in accounts:
        kids.setdefault(a.parent if a.parent in names else "", []).append(a.name)
    pos: dict[str, int] = {}
    stack = sorted(kids.get("", []), reverse=True)
    while stack:
        n = stack.pop()
        pos[n] = len(pos)
        stack.extend(sorted(kids.get(n, []), reverse=True))
    return pos


def _qos_fields(q: QosSpec) -> tuple[tuple[str, str], ...]:
    return (
        ("preempt", ",".join(q.preempt)),
        ("preempt_exempt_s", str(q.preempt_exempt_s)),
        ("preempt_mode", q.preempt_mode),
        ("priority", str(q.priority)),
        ("usage_factor", f"{q.usage_factor:g}"),
    )


def diff_policy(desired: PolicyState, observed: PolicyState, *, prune: bool) -> PolicyPlan:
    """The actions that make ``observed`` equal ``desired`` on everything allotment manages."""
    actions: list[PolicyAction] = []
    deletions: list[PolicyAction] = []
    _diff_qos(desired, observed, actions, deletions)
    managed = _diff_accounts(desired, observed, actions, deletions)
    _diff_users(desired, observed, managed, actions, deletions)
    refused = ""
    if prune and deletions and not any(a.parent != SLURM_ROOT for a in desired.accounts):
        refused = "refusing to prune: the desired budget tree has no account below its root"
    if prune and not refused:
        return PolicyPlan(_sorted([*actions, *deletions]), ())
    return PolicyPlan(_sorted(actions), _sorted(deletions), refused)


def _diff_qos(
    desired: PolicyState, observed: PolicyState, out: list[PolicyAction], gone: list[PolicyAction]
) -> None:
    obs = {q.name: q for q in observed.qos}
    for q in desired.qos:
        have = obs.get(q.name)
        want = _qos_fields(q)
        seq = 1 if q.preempt else 0  # a QOS must exist before another may preempt it
        if have is None:
            out.append(PolicyAction("add_qos", q.name, want, RULE_SYNC, "QOS tier missing", seq))
            continue
        changed = [k for (k, v), (_, w) in zip(want, _qos_fields(have), strict=True) if v != w]
        if changed:
            why = f"QOS differs in {', '.join(changed)}"
            out.append(PolicyAction("modify_qos", q.name, want, RULE_SYNC, why, seq))
    wanted = {q.name for q in desired.qos}
    for name in sorted(obs):
        if is_managed_qos(name) and name not in wanted:
            why = "QOS tier no longer configured"
            gone.append(PolicyAction("delete_qos", name, (), RULE_PRUNE, why))


def _diff_accounts(
    desired: PolicyState, observed: PolicyState, out: list[PolicyAction], gone: list[PolicyAction]
) -> set[str]:
    """Append account actions; return the names of every managed account (observed or desired)."""
    pos = _preorder(desired.accounts)
    managed = managed_accounts(observed, desired.root)
    obs = {a.name: a for a in observed.accounts}
    for a in desired.accounts:
        have = obs.get(a.name)
        cap = "" if a.max_gpus is None else str(a.max_gpus)
        fields = (("fairshare", str(a.fairshare)), ("max_gpus", cap), ("parent", a.parent))
        if have is None:
            out.append(
                PolicyAction(
                    "add_account", a.name, fields, RULE_SYNC, "account missing", pos[a.name]
                )
            )
            continue
        why = []
        if have.fairshare != a.fairshare:
            why.append(f"fairshare {have.fairshare} -> {a.fairshare}")
        if have.parent != a.parent:
            why.append(f"parent {have.parent} -> {a.parent}")
        if have.max_gpus != a.max_gpus:
            why.append(f"max_gpus {_cap(have.max_gpus)} -> {_cap(a.max_gpus)}")
        if why:
            out.append(
                PolicyAction(
                    "modify_account", a.name, fields, RULE_SYNC, "; ".join(why), pos[a.name]
                )
            )
    wanted = {a.name for a in desired.accounts}
    extra = [a for a in managed if a.name not in wanted and a.name != SLURM_ROOT]
    # children before parents: the reverse of the observed pre-order walk
    for i, a in enumerate(reversed(extra)):
        note = "account no longer in the budget tree"
        gone.append(PolicyAction("delete_account", a.name, (), RULE_PRUNE, note, i))
    return {a.name for a in managed} | wanted


def _diff_users(
    desired: PolicyState,
    observed: PolicyState,
    managed: set[str],
    out: list[PolicyAction],
    gone: list[PolicyAction],
) -> None:
    obs = {u.name: u for u in observed.users}
    for u in desired.users:
        have = obs.get(u.name)
        fields = (
            ("accounts", ",".join(u.accounts)),
            ("default_account", u.default_account),
            ("default_qos", u.default_qos),
            ("qos", ",".join(u.qos)),
        )
        have_accts = tuple(a for a in have.accounts if a in managed) if have else ()
        if have is None or not have_accts:
            out.append(PolicyAction("add_user", u.name, fields, RULE_SYNC, "user missing"))
            continue
        missing = sorted(set(u.accounts) - set(have_accts))
        extra = sorted(set(have_accts) - set(u.accounts))
        why = []
        if missing:
            why.append(f"not associated with {','.join(missing)}")
        if have.default_account != u.default_account:
            why.append(f"default account {have.default_account} -> {u.default_account}")
        if have.qos != u.qos or have.default_qos != u.default_qos:
            why.append(
                f"QOS {','.join(have.qos)}/{have.default_qos} -> {','.join(u.qos)}/{u.default_qos}"
            )
        if why:
            out.append(PolicyAction("modify_user", u.name, fields, RULE_SYNC, "; ".join(why)))
        if extra:
            why_gone = f"association with {','.join(extra)} no longer configured"
            gone.append(
                PolicyAction(
                    "delete_user", u.name, (("accounts", ",".join(extra)),), RULE_PRUNE, why_gone
                )
            )
    wanted = {u.name for u in desired.users}
    for name in sorted(obs):
        accts = [a for a in obs[name].accounts if a in managed]
        if name not in wanted and accts:
            fields_gone = (("accounts", ",".join(accts)),)
            gone.append(
                PolicyAction(
                    "delete_user", name, fields_gone, RULE_PRUNE, "user no longer configured"
                )
            )


def _sorted(actions: list[PolicyAction]) -> tuple[PolicyAction, ...]:
    return tuple(sorted(actions, key=PolicyAction.sort_key))


def _cap(max_gpus: int | None) -> str:
    return "none" if max_gpus is None else str(max_gpus)
