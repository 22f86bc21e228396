"""The reference backend: an in-memory cluster with its own small scheduler and a manual clock.

It behaves like the parts of Slurm the reconciler relies on, and nothing more: jobs start in
priority order (then id) where their GPUs fit on one node that is not drained, QOS decides the
declared minimum runtime, a requeued job waits ``requeue_delay_s`` before it may start again,
and policy objects are plain records.  Deterministic: the clock only moves when ``advance`` is
called, and every iteration is over sorted keys.  ``save``/``load`` keep it in a JSON file so
``allot reconcile --backend sim`` has a cluster that lasts between runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from allotment.atomic_file import write_text
from allotment.backends.actions import (
    DRAIN_PREFIX,
    Action,
    ActionResult,
    ClusterAction,
    PolicyAction,
    ResultCode,
    start_key,
)
from allotment.backends.policy import (
    SLURM_ROOT,
    UNALLOCATED_QOS,
    AccountSpec,
    PolicyState,
    QosSpec,
    UserSpec,
)
from allotment.backends.protocol import FinishedRun, JobObs, NodeObs, Observation
from allotment.compile.model import Cluster
from allotment.errors import BackendError, UsageError
from allotment.strict_json import loads_finite


@dataclass(slots=True)
class _Job:
    id: str
    user: str
    account: str
    qos: str
    gpus: int
    submit: float
    resumable: bool = True
    priority: int = 0
    start: float | None = None
    node: str | None = None
    eligible: float = 0.0
    restarts: int = 0
    partition: str = ""
    notices: int = 0  # notices given to it (a session's, reconcile.grace)


@dataclass(slots=True)
class _Node:
    name: str
    gpus: int
    drain: bool = False
    reason: str = ""


@dataclass(slots=True)
class SimState:
    now: float = 0.0
    next_id: int = 1
    nodes: dict[str, _Node] = field(default_factory=dict)
    jobs: dict[str, _Job] = field(default_factory=dict)
    accounts: dict[str, AccountSpec] = field(default_factory=dict)
    users: dict[str, UserSpec] = field(default_factory=dict)
    qos: dict[str, QosSpec] = field(default_factory=dict)
    ended: list[FinishedRun] = field(default_factory=list)  # what ``sacct`` would list


class SimulatedBackend:
    name = "sim"

    def __init__(
        self,
        nodes: Sequence[tuple[str, int]] = (),
        *,
        now: float = 0.0,
        requeue_delay_s: float = 11.0,
        follow: Callable[[], float] | None = None,
    ) -> None:
        self.state = SimState(now=now)
        self.requeue_delay_s = requeue_delay_s
        self.follow = follow  # a wall clock to catch up with on every observe (the CLI's)
        for name, gpus in nodes:
            self.state.nodes[name] = _Node(name, gpus)
        self.state.accounts[SLURM_ROOT] = AccountSpec(SLURM_ROOT, "", 1)

    def adopt_inventory(self, cluster: Cluster) -> None:
        """A new simulated cluster takes its nodes from the inventory (only when it has none)."""
        if not self.state.nodes:
            for g in cluster.node_groups:
                for n in g.node_names:
                    self.state.nodes[n] = _Node(n, g.gpus_per_node)

    # ---------------------------------------------------------------- test/driver helpers --
    def submit(
        self,
        account: str,
        gpus: int,
        *,
        user: str = "root",
        qos: str = "",
        resumable: bool = True,
        priority: int = 1,
        partition: str = "",
    ) -> str:
        """Queue a job (like ``sbatch``); the association and QOS must exist, as with
        ``AccountingStorageEnforce=associations,qos``.  Priority 0 means held, as in Slurm."""
        st = self.state
        u = st.users.get(user)
        if u is None or account not in u.accounts:
            raise BackendError(
                f"invalid account or account/partition combination: {user}/{account}"
            )
        q = qos or u.default_qos
        if q not in st.qos or (u.qos and q not in u.qos):
            raise BackendError(f"invalid qos specification: {q}")
        job_id = str(st.next_id)
        st.next_id += 1
        st.jobs[job_id] = _Job(job_id, user, account, q, gpus, st.now, resumable, priority, partition=partition)
        self._schedule()
        return job_id

    def advance(self, seconds: float) -> None:
        """Move the clock and let the scheduler start what became eligible."""
        self.state.now += seconds
        self._schedule()

    def finish(self, job_id: str) -> None:
        job = self.state.jobs.pop(job_id, None)
        if job is not None:
            self._ended(job)
        self._schedule()

    def config_warnings(self) -> tuple[str, ...] | None:
        """None: a simulated cluster has no config of its own to check."""
        return None

    def history(self, since: float) -> tuple[FinishedRun, ...]:
        """Runs that ended at or after ``since``, oldest first (like ``sacct -S``)."""
        return tuple(r for r in self.state.ended if r.end >= since)

    def _ended(self, job: _Job) -> None:
        if job.start is None:
            return
        q = self.state.qos.get(job.qos)
        mr = None if q is None else (0 if job.qos == UNALLOCATED_QOS else q.preempt_exempt_s)
        nodes = (job.node,) if job.node else ()
        run = FinishedRun(
            job.id, job.user, job.account, job.qos, job.gpus, job.start, self.state.now, mr, nodes
        )
        self.state.ended.append(run)

    def set_fairshare_by_hand(self, account: str, fairshare: int) -> None:
        """What an operator's ``sacctmgr modify account`` does: the drift the reconciler sees."""
        a = self.state.accounts[account]
        self.state.accounts[account] = replace(a, fairshare=fairshare)

    # -------------------------------------------------------------------------- protocol --
    def observe(self) -> Observation:
        if self.follow is not None and self.follow() > self.state.now:
            self.advance(self.follow() - self.state.now)
        st = self.state
        used = {n: 0 for n in st.nodes}
        for j in st.jobs.values():
            if j.node is not None:
                used[j.node] += j.gpus
        nodes = tuple(
            NodeObs(n.name, n.gpus, used[n.name], n.drain, False, n.reason)
            for n in sorted(st.nodes.values(), key=lambda n: n.name)
        )
        jobs = tuple(self._job_obs(j) for j in sorted(st.jobs.values(), key=lambda j: int(j.id)))
        return Observation(st.now, nodes, jobs, backend_now=st.now)

    def observe_policy(self) -> PolicyState:
        st = self.state
        return PolicyState(
            root="",
            accounts=tuple(sorted(st.accounts.values())),
            users=tuple(sorted(st.users.values())),
            qos=tuple(sorted(st.qos.values())),
        )

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        out = []
        for a in actions:
            try:
                if isinstance(a, PolicyAction):
                    code = self._policy(a, dry_run)
                else:
                    code = self._cluster(a, dry_run)
                out.append(ActionResult(a, code))
            except BackendError as exc:
                out.append(ActionResult(a, "failed", str(exc)))
        if not dry_run:
            self._schedule()
        return tuple(out)

    # ------------------------------------------------------------------------- internals --
    def _job_obs(self, j: _Job) -> JobObs:
        q = self.state.qos.get(j.qos)
        min_rt = None if q is None else (0 if j.qos == UNALLOCATED_QOS else q.preempt_exempt_s)
        return JobObs(
            id=j.id,
            user=j.user,
            account=j.account,
            qos=j.qos,
            gpus=j.gpus,
            state="running" if j.start is not None else "pending",
            submit=j.submit,
            start=j.start,
            min_runtime_s=min_rt,
            resumable=j.resumable,
            priority=j.priority,
            nodes=(j.node,) if j.node else (),
            eligible=j.eligible if j.start is None else None,
            partition=j.partition,
        )

    def _policy(self, a: PolicyAction, dry_run: bool) -> ResultCode:
        st = self.state
        f = dict(a.fields)
        if a.kind in ("add_qos", "modify_qos"):
            spec = QosSpec.from_fields(a.target, f)
            if st.qos.get(a.target) == spec:
                return "unchanged"
            if not dry_run:
                st.qos[a.target] = spec
            return "dry_run" if dry_run else "applied"
        if a.kind in ("add_account", "modify_account"):
            if f["parent"] not in st.accounts and not dry_run:
                raise BackendError(f"parent account {f['parent']} does not exist")
            cap = f.get("max_gpus", "")
            acct = AccountSpec(a.target, f["parent"], int(f["fairshare"]), int(cap) if cap else None)
            if st.accounts.get(a.target) == acct:
                return "unchanged"
            if not dry_run:
                st.accounts[a.target] = acct
            return "dry_run" if dry_run else "applied"
        if a.kind in ("add_user", "modify_user"):
            have = st.users.get(a.target)
            accts = tuple(
                sorted(set(f["accounts"].split(",")) | set(have.accounts if have else ()))
            )
            missing = [x for x in accts if x not in st.accounts]
            if missing and not dry_run:
                raise BackendError(f"accounts {missing} do not exist")
            qos = tuple(x for x in f["qos"].split(",") if x)
            user = UserSpec(a.target, accts, f["default_account"], qos, f["default_qos"])
            if have == user:
                return "unchanged"
            if not dry_run:
                st.users[a.target] = user
            return "dry_run" if dry_run else "applied"
        return self._delete(a, dry_run)

    def _delete(self, a: PolicyAction, dry_run: bool) -> ResultCode:
        st = self.state
        if a.kind == "delete_qos":
            if a.target not in st.qos:
                return "unchanged"
            if not dry_run:
                del st.qos[a.target]
            return "dry_run" if dry_run else "pruned"
        if a.kind == "delete_account":
            if a.target not in st.accounts:
                return "unchanged"
            if any(x.parent == a.target for x in st.accounts.values()) and not dry_run:
                raise BackendError(f"account {a.target} still has child accounts")
            if not dry_run:
                del st.accounts[a.target]
                for name, other in list(st.users.items()):
                    rest = tuple(x for x in other.accounts if x != a.target)
                    st.users[name] = replace(other, accounts=rest)
            return "dry_run" if dry_run else "pruned"
        # delete_user: drop the named associations
        u = st.users.get(a.target)
        drop = set((a.field("accounts") or "").split(","))
        if u is None or not drop & set(u.accounts):
            return "unchanged"
        if not dry_run:
            left = tuple(x for x in u.accounts if x not in drop)
            if left:
                dflt = u.default_account if u.default_account in left else left[0]
                st.users[a.target] = replace(u, accounts=left, default_account=dflt)
            else:
                del st.users[a.target]
        return "dry_run" if dry_run else "pruned"

    def _cluster(self, a: ClusterAction, dry_run: bool) -> ResultCode:
        st = self.state
        if a.kind in ("drain", "resume"):
            node = st.nodes.get(a.target)
            if node is None:
                raise BackendError(f"no node {a.target}")
            want = a.kind == "drain"
            if node.drain == want:
                return "unchanged"
            if not dry_run:
                node.drain, node.reason = want, (f"{DRAIN_PREFIX} {a.reason}" if want else "")
            return "dry_run" if dry_run else "applied"
        job = st.jobs.get(a.target)
        if a.kind == "notify":  # the job is told; it keeps running until it is requeued
            if job is None or job.start is None or (a.expect and a.expect != start_key(job.start)):
                return "unchanged"
            if not dry_run:
                job.notices += 1
            return "dry_run" if dry_run else "applied"
        if a.kind == "requeue":
            # keyed by the start time it was planned against: a retry finds it pending -> no-op
            if job is None or job.start is None or (a.expect and a.expect != start_key(job.start)):
                return "unchanged"
            if not dry_run:
                self._ended(job)
                job.start, job.node = None, None
                job.eligible = st.now + self.requeue_delay_s
                job.restarts += 1
            return "dry_run" if dry_run else "applied"
        if a.kind == "cancel":
            if job is None:
                return "unchanged"
            if not dry_run:
                self._ended(job)
                del st.jobs[a.target]
            return "dry_run" if dry_run else "applied"
        if job is None or job.start is not None or job.priority == a.value:
            return "unchanged"
        if not dry_run:
            job.priority = a.value
        return "dry_run" if dry_run else "applied"

    def _schedule(self) -> None:
        """Start eligible pending jobs, highest priority first (then id), on the emptiest-fit
        node that is not drained."""
        st = self.state
        free = {n.name: n.gpus for n in st.nodes.values()}
        for j in st.jobs.values():
            if j.node is not None:
                free[j.node] -= j.gpus
        pending = sorted(
            (
                j
                for j in st.jobs.values()
                if j.start is None and j.eligible <= st.now and j.priority > 0
            ),
            key=lambda j: (-j.priority, int(j.id)),
        )
        for j in pending:
            if j.gpus > max(free.values(), default=0):
                continue
            fits = sorted((g, n) for n, g in free.items() if g >= j.gpus and not st.nodes[n].drain)
            if not fits:
                continue
            _, node = fits[0]
            j.start, j.node = st.now, node
            free[node] -= j.gpus

    # ----------------------------------------------------------------------- persistence --
    def save(self, path: Path) -> None:
        write_text(path, json.dumps(_dump(self.state), sort_keys=True, indent=1), durable=True)

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        requeue_delay_s: float = 11.0,
        follow: Callable[[], float] | None = None,
    ) -> SimulatedBackend:
        try:
            return cls._load(loads_finite(path.read_text(encoding="utf-8")), requeue_delay_s, follow)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(
                f"{path}: not a simulated cluster's state ({type(exc).__name__}: {exc}); "
                "move it aside to start afresh"
            ) from None

    @classmethod
    def _load(
        cls, raw: Any, requeue_delay_s: float, follow: Callable[[], float] | None
    ) -> SimulatedBackend:
        b = cls(requeue_delay_s=requeue_delay_s, follow=follow)
        st = b.state
        st.now, st.next_id = float(raw["now"]), int(raw["next_id"])
        st.nodes = {k: _Node(**v) for k, v in raw["nodes"].items()}
        st.jobs = {k: _Job(**v) for k, v in raw["jobs"].items()}
        st.accounts = {k: AccountSpec(**v) for k, v in raw["accounts"].items()}
        st.users = {
            k: UserSpec(
                v["name"],
                tuple(v["accounts"]),
                v["default_account"],
                tuple(v["qos"]),
                v["default_qos"],
            )
            for k, v in raw["users"].items()
        }
        st.qos = {
            k: QosSpec(
                v["name"],
                v["priority"],
                tuple(v["preempt"]),
                v["preempt_exempt_s"],
                v["usage_factor"],
                v["preempt_mode"],
            )
            for k, v in raw["qos"].items()
        }
        st.ended = [
            FinishedRun(**{**r, "nodes": tuple(r.get("nodes", ()))}) for r in raw.get("ended", [])
        ]
        return b


def _dump(st: SimState) -> dict[str, Any]:
    return {
        "now": st.now,
        "next_id": st.next_id,
        "nodes": {k: asdict(v) for k, v in st.nodes.items()},
        "jobs": {k: asdict(v) for k, v in st.jobs.items()},
        "accounts": {k: asdict(v) for k, v in st.accounts.items()},
        "users": {k: asdict(v) for k, v in st.users.items()},
        "qos": {k: asdict(v) for k, v in st.qos.items()},
        "ended": [asdict(r) for r in st.ended],
    }
