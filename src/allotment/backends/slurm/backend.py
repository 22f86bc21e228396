"""The Slurm backend: policy through ``sacctmgr -i``, observation through ``squeue``/``sinfo``
JSON, actions through ``scontrol``.  Slurm stays the scheduler; this only steers it.

How a job declares its contract on Slurm (see docs/operators-guide.md): its QOS.  ``alloc-15m``,
``alloc-1h``... carry the minimum runtime as ``PreemptExemptTime``; ``unallocated`` is free
(``UsageFactor=0``) and preemptible at once.  A job submitted with ``--no-requeue`` is not
resumable.

Every write is check-then-act: the action is checked against a snapshot first (``unchanged``
when already true), run once, and after a failure or timeout the cluster is read again; the write
is repeated (with backoff) only if its effect is still missing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from allotment.backends.actions import Action, ActionResult, ClusterAction, PolicyAction, ResultCode
from allotment.backends.check import cluster_done, policy_done
from allotment.backends.policy import PolicyState
from allotment.backends.protocol import FinishedRun, Observation
from allotment.backends.slurm import commands as cmd
from allotment.backends.slurm.clock import SDIAG_ARGV, parse_sdiag_time
from allotment.backends.slurm.config_check import (
    SHOW_CONFIG_ARGV,
    config_warnings,
    parse_show_config,
)
from allotment.backends.slurm.history import parse_sacct_json, sacct_argv
from allotment.backends.slurm.parse import (
    ASSOC_FORMAT,
    QOS_FORMAT,
    USER_FORMAT,
    parse_assoc,
    parse_qos,
    parse_sinfo_json,
    parse_squeue_json,
)
from allotment.backends.slurm.runner import Runner
from allotment.errors import BackendError

log = logging.getLogger(__name__)


class SlurmBackend:
    name = "slurm"

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        runner: Runner | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.runner = runner or Runner(env=dict(env or {}))
        self.clock = clock
        self._exempt: dict[str, int] = {}

    def config_warnings(self) -> tuple[str, ...] | None:
        """What the controller's config lacks for active mode (``config_check``); a config that
        cannot be read is itself one warning, never a failed start."""
        try:
            text = self.runner.read(SHOW_CONFIG_ARGV)
        except BackendError as exc:
            return (f"slurm.conf not checked: {' '.join(SHOW_CONFIG_ARGV)} failed: {exc}",)
        return config_warnings(parse_show_config(text))

    # -------------------------------------------------------------------------- observe --
    def observe(self) -> Observation:
        if not self._exempt:
            self.observe_policy()
        at = self.clock()
        with ThreadPoolExecutor(3) as pool:
            jobs_f = pool.submit(self.runner.read, ["squeue", "--json"])
            nodes_f = pool.submit(self.runner.read, ["sinfo", "--json"])
            clock_f = pool.submit(self.runner.read, SDIAG_ARGV)
            jobs_text, nodes_text = jobs_f.result(), nodes_f.result()
            server_now = parse_sdiag_time(clock_f.result())
        return Observation(
            at,
            parse_sinfo_json(nodes_text),
            parse_squeue_json(jobs_text, self._exempt),
            backend_now=server_now,
        )

    def history(self, since: float) -> tuple[FinishedRun, ...]:
        if not self._exempt:
            self.observe_policy()
        return parse_sacct_json(self.runner.read(sacct_argv(since)), since, self._exempt)

    def observe_policy(self) -> PolicyState:
        base = ["sacctmgr", "-n", "-P", "show"]
        with ThreadPoolExecutor(3) as pool:
            qos_f = pool.submit(self.runner.read, [*base, "qos", f"format={QOS_FORMAT}"])
            assoc_f = pool.submit(self.runner.read, [*base, "assoc", f"format={ASSOC_FORMAT}"])
            user_f = pool.submit(self.runner.read, [*base, "user", f"format={USER_FORMAT}"])
            qos_text, assoc_text, user_text = qos_f.result(), assoc_f.result(), user_f.result()
        qos = parse_qos(qos_text)
        self._exempt = {q.name: q.preempt_exempt_s for q in qos if q.preempt_exempt_s > 0}
        accounts, users = parse_assoc(assoc_text, user_text)
        return PolicyState("", accounts, users, qos)

    # ---------------------------------------------------------------------------- apply --
    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        policy = [a for a in actions if isinstance(a, PolicyAction)]
        cluster = [a for a in actions if isinstance(a, ClusterAction)]
        results: dict[int, ActionResult] = {}
        if policy:
            snap = self.observe_policy()
            for a in policy:
                results[id(a)] = self._one_policy(a, snap, dry_run)
                if results[id(a)].code in ("applied", "pruned"):
                    snap = _assume(snap, a)
        if cluster:
            obs = self.observe()
            for c in cluster:
                results[id(c)] = self._one_cluster(c, obs, dry_run)
        return tuple(results[id(a)] for a in actions)

    def _one_policy(self, a: PolicyAction, snap: PolicyState, dry_run: bool) -> ActionResult:
        if policy_done(a, snap):
            return ActionResult(a, "unchanged")
        if dry_run:
            argvs = self._policy_commands(a, snap)
            return ActionResult(a, "dry_run", " ; ".join(" ".join(x) for x in argvs))
        done: ResultCode = "pruned" if a.kind.startswith("delete") else "applied"

        def recheck() -> list[list[str]] | None:
            fresh = self.observe_policy()
            return None if policy_done(a, fresh) else self._policy_commands(a, fresh)

        return self._with_retries(a, self._policy_commands(a, snap), recheck, done)

    def _one_cluster(self, a: ClusterAction, obs: Observation, dry_run: bool) -> ActionResult:
        if cluster_done(a, obs):
            return ActionResult(a, "unchanged")
        argvs = cmd.cluster_commands(a)
        if dry_run:
            return ActionResult(a, "dry_run", " && ".join(" ".join(argv) for argv in argvs))

        def recheck() -> list[list[str]] | None:
            return None if cluster_done(a, self.observe()) else argvs

        res = self._with_retries(a, argvs, recheck, "applied")
        if a.kind == "set_priority" and res.code == "applied" and any(
            m in res.message for m in cmd.NOT_PENDING
        ):
            # Slurm refused the update because the job already ran: an earlier decision's run,
            # not this one's (what ``unchanged`` says of a start; reconcile.yield_flags and the
            # replay's ``placed`` read it so).  Seed 13, 2026-12-07: job 46, decided at one tick,
            # launched while the next tick's update of it was on its way
            return ActionResult(a, "unchanged", res.message)
        return res

    def _with_retries(
        self,
        a: Action,
        argvs: list[list[str]],
        recheck: Callable[[], list[list[str]] | None],
        code: ResultCode,
    ) -> ActionResult:
        """Run ``argvs``; after a failure, wait, re-read the cluster (``recheck`` returns None
        when the effect is there, else the commands still needed) and run only those."""
        last = ""
        r = self.runner
        todo: list[list[str]] | None = argvs
        for attempt in range(r.retries + 1):
            if attempt:
                r.sleep(r.backoff_s * 2 ** (attempt - 1))
                try:
                    todo = recheck()
                except BackendError as exc:
                    last = str(exc)
                    continue
                if todo is None:
                    return ActionResult(a, code, f"took effect despite: {last}")
            try:
                for argv in todo or []:
                    r.write(argv)
                return ActionResult(a, code)
            except BackendError as exc:
                last = str(exc)
                log.warning("%s %s failed (attempt %d): %s", a.kind, a.target, attempt + 1, exc)
        return ActionResult(a, "failed", last)

    def _policy_commands(self, a: PolicyAction, snap: PolicyState) -> list[list[str]]:
        """Only the commands whose effect is missing, so a partly done action finishes."""
        f = dict(a.fields)
        if a.kind == "add_qos":
            return [cmd.add_qos(cmd.qos_from_action(a))]
        if a.kind == "modify_qos":
            return [cmd.modify_qos(cmd.qos_from_action(a))]
        if a.kind in ("add_account", "modify_account"):
            have = snap.account(a.target)
            acct = cmd.account_from_action(a)
            if have is None:
                return [cmd.add_account(acct)]
            return [
                cmd.modify_account(
                    a.target,
                    fairshare=acct.fairshare if have.fairshare != acct.fairshare else None,
                    parent=acct.parent if have.parent != acct.parent else None,
                    max_gpus=(acct.max_gpus,) if have.max_gpus != acct.max_gpus else None,
                )
            ]
        if a.kind in ("add_user", "modify_user"):
            want = cmd.user_from_action(a)
            hu = next((u for u in snap.users if u.name == a.target), None)
            have_accts = set(hu.accounts) if hu else set()
            out = []
            missing = tuple(x for x in want.accounts if x not in have_accts)
            if missing:
                out.append(cmd.add_user(a.target, missing, want.default_account))
            if hu is None or hu.default_account != want.default_account:
                out.append(cmd.set_default_account(a.target, want.default_account))
            if hu is None or missing or hu.qos != want.qos or hu.default_qos != want.default_qos:
                out.append(cmd.set_user_qos(want))
            return out
        if a.kind == "delete_user":
            return [cmd.delete_user(a.target, f["accounts"])]
        if a.kind == "delete_account":
            return [cmd.delete_account(a.target)]
        return [cmd.delete_qos(a.target)]


def _assume(snap: PolicyState, a: PolicyAction) -> PolicyState:
    """The snapshot after ``a`` succeeded: enough for the next actions' checks (accounts only;
    users and QOS are each touched by one action per plan)."""
    if a.kind in ("add_account", "modify_account"):
        rest = tuple(x for x in snap.accounts if x.name != a.target)
        new = cmd.account_from_action(a)
        return replace(snap, accounts=tuple(sorted((*rest, new))))
    if a.kind == "delete_account":
        return replace(snap, accounts=tuple(x for x in snap.accounts if x.name != a.target))
    return snap
