"""Accounts, users and QOS on a Kubernetes cluster: read them back as a ``PolicyState`` and
apply policy actions with server-side apply under the ``allotment`` field manager.

Derived objects follow the accounts after every applied change (``converge_derived``): the
GPU quota of every budget queue (``quota.gpu_quotas`` over the observed tree and the nodes'
GPUs) and one tier child queue per leaf and QOS.  Only objects whose fields differ are written,
so a changed share rewrites exactly the queues whose weight or quota changed.

Drift: a field of ours changed by anyone else shows in ``managedFields`` under their manager;
the diff sees the value differ, and the forced apply that corrects it reports whom it took the
fields back from (``ActionResult.message``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from allotment.backends.actions import ActionResult, PolicyAction
from allotment.backends.kubernetes import names as n
from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.objects import (
    budget_queue,
    priority_class,
    tier_queue,
    user_config,
)
from allotment.backends.kubernetes.policy_read import (
    Snapshot,
    account_of,
    foreign_fields,
    qos_of,
    tiers_of,
    user_of,
)
from allotment.backends.kubernetes.quota import tree_quotas
from allotment.backends.policy import SLURM_ROOT, AccountSpec, PolicyState, QosSpec, UserSpec
from allotment.errors import BackendError

Obj = dict[str, Any]
QUEUES = "/apis/scheduling.run.ai/v2/queues"
PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
CONFIGMAPS = f"/api/v1/namespaces/{n.USERS_NAMESPACE}/configmaps"
OURS = f"{n.MANAGED_BY}={n.FIELD_MANAGER}"


class PolicySync:
    def __init__(self, client: KubeClient) -> None:
        self.c = client
        self._namespace_ok = False

    def snapshot(self) -> Snapshot:
        def by_name(items: Iterable[Obj]) -> dict[str, Obj]:
            return {o["metadata"]["name"]: o for o in items}

        users: list[Obj] = []
        try:
            users = self.c.list_all(CONFIGMAPS, labelSelector=OURS)
        except ApiError as exc:
            if exc.status != 404:
                raise
        return Snapshot(
            by_name(self.c.list_all(QUEUES, labelSelector=OURS)),
            by_name(self.c.list_all(PRIORITY_CLASSES, labelSelector=OURS)),
            by_name(users),
        )

    @staticmethod
    def state(snap: Snapshot) -> PolicyState:
        accounts = [account_of(q) for q in snap.kind("budget").values()]
        accounts.append(AccountSpec(SLURM_ROOT, "", 1))  # the tree's anchor, as in Slurm
        return PolicyState(
            root="",
            accounts=tuple(sorted(accounts)),
            users=tuple(sorted(user_of(cm) for cm in snap.users.values())),
            qos=tuple(sorted(qos_of(pc) for pc in snap.classes.values())),
        )

    # ----------------------------------------------------------------------- actions --
    def planned_quotas(
        self, snap: Snapshot, actions: Iterable[PolicyAction], gpus: int
    ) -> dict[str, float]:
        """The quotas the tree will have once ``actions`` are applied, so each queue is written
        once with its final quota (not once per sibling whose weight changes)."""
        accounts = {x.name: x for x in self.state(snap).accounts}
        for a in actions:
            if a.kind in ("add_account", "modify_account"):
                accounts[a.target] = AccountSpec(
                    a.target, a.field("parent") or SLURM_ROOT, int(a.field("fairshare") or 1)
                )
            elif a.kind == "delete_account":
                accounts.pop(a.target, None)
        return tree_quotas(accounts.values(), gpus)

    def apply(
        self, a: PolicyAction, snap: Snapshot, quotas: dict[str, float], dry_run: bool
    ) -> ActionResult:
        f = dict(a.fields)
        try:
            if a.kind in ("add_account", "modify_account"):
                return self._account(a, f, snap, quotas, dry_run)
            if a.kind in ("add_qos", "modify_qos"):
                return self._qos(a, f, snap, dry_run)
            if a.kind in ("add_user", "modify_user", "delete_user"):
                return self._user(a, f, snap, dry_run)
            return self._delete(a, snap, dry_run)
        except BackendError as exc:
            return ActionResult(a, "failed", str(exc))

    def _account(
        self,
        a: PolicyAction,
        f: dict[str, str],
        snap: Snapshot,
        quotas: dict[str, float],
        dry_run: bool,
    ) -> ActionResult:
        parent = f["parent"]
        if parent != SLURM_ROOT and parent not in snap.kind("budget") and not dry_run:
            raise BackendError(f"parent queue {parent} does not exist")
        want = AccountSpec(a.target, parent, int(f["fairshare"]))
        have = snap.queues.get(a.target)
        if have is not None and account_of(have) == want and not foreign_fields(have):
            return ActionResult(a, "unchanged")
        quota = quotas.get(a.target, 0.0)
        obj = budget_queue(
            a.target, None if parent == SLURM_ROOT else parent, want.fairshare, quota, None
        )
        got = self.c.apply(
            f"{QUEUES}/{n.k8s_name(a.target)}", obj, n.FIELD_MANAGER, dry_run=dry_run
        )
        if not dry_run:
            snap.queues[a.target] = got
        took = foreign_fields(have) if have else []
        msg = ("took back " + "; ".join(took)) if took else ""
        return ActionResult(a, "dry_run" if dry_run else "applied", msg)

    def _qos(
        self, a: PolicyAction, f: dict[str, str], snap: Snapshot, dry_run: bool
    ) -> ActionResult:
        want = QosSpec.from_fields(a.target, f)
        have = snap.classes.get(a.target)
        if have is not None and qos_of(have) == want:
            return ActionResult(a, "unchanged")
        if dry_run:
            return ActionResult(a, "dry_run")
        path = f"{PRIORITY_CLASSES}/{n.k8s_name(a.target)}"
        if have is not None and int(have.get("value", 0)) != want.priority:
            self.c.request("DELETE", path)  # a PriorityClass value is immutable
        snap.classes[a.target] = self.c.apply(path, priority_class(want), n.FIELD_MANAGER)
        return ActionResult(a, "applied")

    def _ensure_namespace(self) -> None:
        if self._namespace_ok:
            return
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.USERS_NAMESPACE}}
        self.c.apply(f"/api/v1/namespaces/{n.USERS_NAMESPACE}", ns, n.FIELD_MANAGER)
        self._namespace_ok = True

    def _user(
        self, a: PolicyAction, f: dict[str, str], snap: Snapshot, dry_run: bool
    ) -> ActionResult:
        name = n.user_configmap(a.target)
        have = user_of(snap.users[name]) if name in snap.users else None
        if a.kind == "delete_user":
            drop = set(f.get("accounts", "").split(","))
            if have is None or not drop & set(have.accounts):
                return ActionResult(a, "unchanged")
            if dry_run:
                return ActionResult(a, "dry_run")
            left = tuple(x for x in have.accounts if x not in drop)
            if not left:
                self.c.request("DELETE", f"{CONFIGMAPS}/{name}")
                del snap.users[name]
                return ActionResult(a, "pruned")
            dflt = have.default_account if have.default_account in left else left[0]
            want = UserSpec(have.name, left, dflt, have.qos, have.default_qos)
        else:
            accts = set(f["accounts"].split(",")) | set(have.accounts if have else ())
            want = UserSpec(
                a.target,
                tuple(sorted(accts)),
                f["default_account"],
                tuple(x for x in f["qos"].split(",") if x),
                f["default_qos"],
            )
            if have == want:
                return ActionResult(a, "unchanged")
            if dry_run:
                return ActionResult(a, "dry_run")
        self._ensure_namespace()
        snap.users[name] = self.c.apply(f"{CONFIGMAPS}/{name}", user_config(want), n.FIELD_MANAGER)
        return ActionResult(a, "pruned" if a.kind == "delete_user" else "applied")

    def _delete(self, a: PolicyAction, snap: Snapshot, dry_run: bool) -> ActionResult:
        if a.kind == "delete_qos":
            if a.target not in snap.classes:
                return ActionResult(a, "unchanged")
            gone = [k for k, t in tiers_of(snap).items() if t.qos == a.target]
            target = f"{PRIORITY_CLASSES}/{a.target}"
        else:  # delete_account
            if a.target not in snap.kind("budget"):
                return ActionResult(a, "unchanged")
            if any(account_of(q).parent == a.target for q in snap.kind("budget").values()):
                raise BackendError(f"queue {a.target} still has child queues")
            gone = [k for k, t in tiers_of(snap).items() if t.account == a.target]
            target = f"{QUEUES}/{a.target}"
        if dry_run:
            return ActionResult(a, "dry_run")
        for k in gone:
            self.c.request("DELETE", f"{QUEUES}/{k}")
            snap.queues.pop(k, None)
        self.c.request("DELETE", target)
        (snap.classes if a.kind == "delete_qos" else snap.queues).pop(a.target, None)
        return ActionResult(a, "pruned")

    # ------------------------------------------------------------------ derived ------
    def converge_derived(self, snap: Snapshot, gpus: int) -> list[str]:
        """Quotas and tier queues that follow from the accounts; names of the queues written."""
        state = self.state(snap)
        budget = snap.kind("budget")
        accounts = [x for x in state.accounts if x.name != SLURM_ROOT]
        quotas = tree_quotas(accounts, gpus)
        written = []
        for name, q in sorted(budget.items()):
            a = account_of(q)
            have = ((q.get("spec") or {}).get("resources") or {}).get("gpu", {}).get("quota")
            if have != quotas.get(name, 0.0):
                obj = budget_queue(
                    name,
                    None if a.parent == SLURM_ROOT else a.parent,
                    a.fairshare,
                    quotas.get(name, 0.0),
                    None,
                )
                snap.queues[name] = self.c.apply(f"{QUEUES}/{name}", obj, n.FIELD_MANAGER)
                written.append(name)
        parents = {x.parent for x in accounts}
        for leaf in sorted(x.name for x in accounts if x.name not in parents):
            for qos in state.qos:
                obj = tier_queue(leaf, qos)
                name = obj["metadata"]["name"]
                have_q = snap.queues.get(name)
                if have_q is not None and _same(have_q, obj):
                    continue
                snap.queues[name] = self.c.apply(f"{QUEUES}/{name}", obj, n.FIELD_MANAGER)
                written.append(name)
        return written


def _same(have: Obj, want: Obj) -> bool:
    """Every field we set is already so (the server may add defaults we do not own)."""

    def covered(h: Any, w: Any) -> bool:
        if isinstance(w, dict):
            return isinstance(h, dict) and all(covered(h.get(k), v) for k, v in w.items())
        return bool(h == w)

    return covered(have.get("spec"), want["spec"]) and covered(
        have["metadata"].get("labels"), want["metadata"]["labels"]
    )
