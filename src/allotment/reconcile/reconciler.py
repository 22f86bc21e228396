"""One reconciler tick, level-triggered, as numbered steps (gitops-engine style):

1. fetch the source; pick the newest commit that validates (never a bad one; remember bad ones);
2. compile it at today's date (the same bytes, hence the same ``inputs_sha256``, as ``allot plan``);
3. pair desired policy with observed policy and diff (pure);
4. drift: the same revision as last applied, yet a difference -> reported, and corrected only
   when ``Policy.drift`` is ``correct``;
5. dry-run every action, then apply (unless ``--dry-run``);
6. active mode: observe jobs and nodes, write the usage ledger, read node health, run the core,
   dry-run and apply its requeues, priorities, drains and resumes;
7. audit log, status, conditions.

A ``BackendError`` anywhere stops the tick: Stalled with the reason, the last good revision kept.
Everything written (ledger rows, audit lines, status) is committed per step, so a crash loses at
most the step in flight and the next tick, observing again, converges.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from allotment.backends.actions import Action, ActionResult
from allotment.backends.diff import PolicyPlan, diff_policy
from allotment.backends.policy import DEFAULT_TIERS_S, desired_policy
from allotment.backends.protocol import Backend, Observation
from allotment.compile.compiler import compile_config
from allotment.compile.model import CompiledConfig
from allotment.config.loader import load_config
from allotment.errors import BackendError, CompileError, ConfigError
from allotment.reconcile.active import maintenance_now, node_types, plan_cluster
from allotment.reconcile.audit import AuditLog, audit_lines
from allotment.reconcile.health import read_health
from allotment.reconcile.ledger import Ledger, RunObs
from allotment.reconcile.source import Source
from allotment.reconcile.status import Status, load_status, save_status

log = logging.getLogger(__name__)
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Options:
    cluster: str | None = None  # None: the only (or largest) cluster in the inventory
    dry_run: bool = False
    active: bool = True  # observe jobs, keep the ledger, run the core (False: policy sync only)
    tiers_s: tuple[int, ...] = DEFAULT_TIERS_S
    history_limit: int = 50  # how many commits back to look for one that validates
    health_file: str | None = None  # overrides the inventory's health_file
    ordered: int = 64  # how many head-of-queue jobs get an explicit priority each tick


@dataclass(slots=True)
class TickResult:
    revision: str | None
    results: list[ActionResult] = field(default_factory=list)
    error: str | None = None
    drift: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(r.code for r in self.results).items()))


class Reconciler:
    def __init__(
        self,
        backend: Backend,
        source: Source,
        state_dir: Path,
        options: Options = Options(),
        *,
        clock: Clock = time.time,
        source_label: str = "",
    ) -> None:
        self.backend, self.source, self.options, self.clock = backend, source, options, clock
        state_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir = state_dir
        self.ledger = Ledger(state_dir / "ledger.sqlite")
        self.audit = AuditLog(state_dir / "audit.jsonl")
        self.status: Status = load_status(state_dir)
        self.status.backend = backend.name
        self.status.source = source_label
        self._compiled: dict[tuple[str, dt.date], CompiledConfig] = {}
        self._evicted_by: dict[str, str] = {}  # requeued job -> the job it made room for

    def close(self) -> None:
        self.ledger.close()
        self.source.close()

    # ------------------------------------------------------------------------------ tick --
    def tick(self) -> TickResult:
        now = self.clock()
        st = self.status
        st.ticks += 1
        st.last_tick = now
        result = TickResult(None)
        try:
            self._tick(now, result)
        except BackendError as exc:
            result.error = str(exc)
            st.last_error = result.error
            st.set_condition("Stalled", True, "BackendFailure", result.error, now)
            st.set_condition(
                "Ready", False, "BackendFailure", "the backend could not be read or changed", now
            )
            st.set_condition("Reconciling", False, "Stalled", "waiting for the backend", now)
        finally:
            counts = result.counts()
            st.last_tick_counts = counts
            for k, v in counts.items():
                st.action_counts[k] = st.action_counts.get(k, 0) + v
            save_status(self.state_dir, st)
        return result

    def _tick(self, now: float, result: TickResult) -> None:
        st, opts = self.status, self.options
        # 1-2. newest commit that validates, compiled
        self.source.fetch()
        chosen = self._choose(now)
        if chosen is None:
            msg = "no commit on the branch validates; nothing applied"
            st.last_error = msg
            st.set_condition("Stalled", True, "NoValidRevision", msg, now)
            st.set_condition("Ready", False, "NoValidRevision", msg, now)
            return
        sha, config, newest = chosen
        result.revision = sha
        st.last_attempted_revision = newest
        cluster = opts.cluster or _default_cluster(config)
        st.cluster = cluster
        policy = config.policy_for(cluster)
        adopt = getattr(self.backend, "adopt_inventory", None)
        if adopt is not None:  # the simulated backend builds its nodes from the inventory
            adopt(config.clusters[cluster])

        # 3. desired vs observed
        desired = desired_policy(config, cluster, opts.tiers_s, backend_preempts=not opts.active)
        plan = diff_policy(desired, self.backend.observe_policy(), prune=policy.prune)
        st.prune_skipped = [f"{a.kind} {a.target}: {a.reason}" for a in plan.prune_skipped]
        if plan.prune_refused:
            st.prune_skipped.insert(0, plan.prune_refused)

        # 4. drift
        same = (
            sha == st.last_applied_revision
            and config.inputs_sha256 == st.last_applied_inputs_sha256
        )
        actions: Sequence[Action] = plan.actions
        result.drift = [f"{a.kind} {a.target}: {a.reason}" for a in plan.actions] if same else []
        st.drift = result.drift
        if result.drift and policy.drift == "report":
            actions = ()

        # 5. dry-run, then apply
        applied = self._run(actions, now, sha, result)
        failed = [r for r in result.results if r.code == "failed"]
        if not failed and not opts.dry_run:
            st.last_applied_revision, st.last_applied_inputs_sha256 = sha, config.inputs_sha256

        # 6. active mode
        if opts.active:
            applied += self._active(config, cluster, sha, now, result)

        # 7. conditions
        failed = [r for r in result.results if r.code == "failed"]
        self._conditions(now, sha, newest, plan, result, failed, applied, policy.drift)

    def _run(self, actions: Sequence[Action], now: float, sha: str, result: TickResult) -> int:
        """Dry-run every action, then apply them; returns how many changed something."""
        if not actions:
            return 0
        dry = self.backend.apply(actions, dry_run=True)
        if self.options.dry_run:
            result.results.extend(dry)
            self.audit.append(audit_lines(dry, at=now, revision=sha, dry_run=True))
            return 0
        bad = [r for r in dry if r.code == "failed"]
        if bad:
            result.results.extend(dry)
            self.audit.append(audit_lines(dry, at=now, revision=sha, dry_run=True))
            return 0
        done = self.backend.apply(actions)
        result.results.extend(done)
        self.audit.append(audit_lines(done, at=now, revision=sha, dry_run=False))
        return sum(1 for r in done if r.code in ("applied", "pruned"))

    def _active(
        self, config: CompiledConfig, cluster: str, sha: str, now: float, result: TickResult
    ) -> int:
        obs = self.backend.observe()
        self.record_usage(obs, config, cluster)
        policy = config.policy_for(cluster)
        usage = self.ledger.usage(obs.at, policy.lookback_s)
        c = config.clusters[cluster]
        health_file = self.options.health_file or c.health_file
        unhealthy = read_health(health_file, None if health_file else c.health_command)
        for node, why in maintenance_now(config, cluster, obs.at).items():
            unhealthy.setdefault(node, why)
        cplan = plan_cluster(
            obs,
            config,
            cluster,
            usage,
            unhealthy,
            ordered=self.options.ordered,
            evicted_by=self._evicted_by,
        )
        before = len(result.results)
        changed = self._run(cplan.actions, now, sha, result)
        done = {
            r.action.target
            for r in result.results[before:]
            if r.code == "applied" and r.action.kind == "requeue"
        }
        live = {j.id for j in obs.jobs}
        self._evicted_by = {j: w for j, w in self._evicted_by.items() if j in live}
        for p in cplan.decisions.preemptions:
            if p.job_id in done and p.for_job:
                self._evicted_by[p.job_id] = p.for_job
        return changed

    def record_usage(self, obs: Observation, config: CompiledConfig, cluster: str) -> int:
        """Ledger rows for every allocated running job, weighted by its node's GPU type."""
        types = node_types(config, cluster)
        runs = []
        for j in obs.running():
            if j.start is None or j.min_runtime_s == 0:
                continue
            gpu_type = types.get(j.nodes[0]) if j.nodes else None
            gt = config.gpu_types.get(gpu_type) if gpu_type else None
            weight = gt.billing_weight if gt else 1.0
            runs.append(RunObs(j.id, j.account, j.start, obs.at, j.gpus, weight))
        return self.ledger.record(runs)

    # ---------------------------------------------------------------------- revisions --
    def _choose(self, now: float) -> tuple[str, CompiledConfig, str] | None:
        """(sha to apply, its compiled config, newest sha seen).  Bad commits are remembered in
        status with their first error and never compiled again."""
        st = self.status
        at = dt.datetime.fromtimestamp(now, dt.UTC).date()
        history = self.source.history(self.options.history_limit)
        if not history:
            return None
        newest = history[0].sha
        for c in history:
            if c.sha in st.bad_revisions:
                continue
            key = (c.sha, at)
            if key not in self._compiled:
                try:
                    files = self.source.files(c.sha)
                    rev = None if c.sha == "dir" else c.sha
                    self._compiled = {key: compile_config(load_config(files), at, rev)}
                except (ConfigError, CompileError) as exc:
                    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    if c.sha != "dir":
                        st.bad_revisions[c.sha] = first
                    log.warning("revision %s does not validate: %s", c.sha[:12], first)
                    if c.sha == "dir":
                        raise BackendError(f"the source folder does not validate: {first}") from exc
                    continue
            return c.sha, self._compiled[key], newest
        return None

    def _conditions(
        self,
        now: float,
        sha: str,
        newest: str,
        plan: PolicyPlan,
        result: TickResult,
        failed: list[ActionResult],
        applied: int,
        drift_rule: str,
    ) -> None:
        st = self.status
        if failed:
            msg = "; ".join(f"{r.action.kind} {r.action.target}: {r.message}" for r in failed[:3])
            st.last_error = msg
            st.set_condition("Stalled", True, "ActionsFailed", msg, now)
            st.set_condition(
                "Ready", False, "ActionsFailed", f"{len(failed)} action(s) failed", now
            )
        elif sha != newest:
            bad = st.bad_revisions.get(newest, "does not validate")
            msg = f"staying on last good {sha[:12]}: newest {newest[:12]} {bad}"
            st.last_error = msg
            st.set_condition("Stalled", True, "NewestRevisionInvalid", msg, now)
            st.set_condition("Ready", True, "AppliedLastGood", f"cluster matches {sha[:12]}", now)
        else:
            st.last_error = None
            st.set_condition("Stalled", False, "Progressing", "", now)
            if result.drift and drift_rule == "report":
                st.set_condition(
                    "Ready",
                    False,
                    "DriftReported",
                    f"{len(result.drift)} difference(s) left as found (policy drift: report)",
                    now,
                )
            elif self.options.dry_run:
                n = len(plan.actions)
                st.set_condition(
                    "Ready", n == 0, "DryRun", f"{n} policy action(s) would be applied", now
                )
            else:
                st.set_condition("Ready", True, "Synced", f"cluster matches {sha[:12]}", now)
        st.set_condition(
            "Reconciling",
            applied > 0,
            "Progressing" if applied else "Idle",
            f"{applied} change(s) this tick",
            now,
        )


def _default_cluster(config: CompiledConfig) -> str:
    if len(config.clusters) == 1:
        return next(iter(config.clusters))
    return config.largest_cluster()
