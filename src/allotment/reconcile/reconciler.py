"""One reconciler tick, level-triggered, as numbered steps (gitops-engine style):

1. fetch the source (with a timeout; a failure is remembered, not fatal);
2. choose the revision: the newest that validates, else the last good one (``revisions``);
3. pair its desired policy with the observed policy and diff (pure); drift is reported, and
   corrected only when ``Policy.drift`` is ``correct``;
4. dry-run every action, then apply (unless ``--dry-run``); a revision the backend refuses is
   remembered and the last good revision keeps being driven;
5. active mode: observe on the backend's clock (refuse to act beyond ``max_skew_s``), charge the
   ledger from the observation and the backend's history since the last one, read node health,
   run the core, dry-run and apply its requeues, priorities, drains and resumes;
6. conditions (``conditions``), audit log, status.

Before step 1 the operator's requests are read (``control``): a suspended reconciler runs every
step but applies nothing (all its actions are only dry-run, none audited as applied).

A ``BackendError`` stops the tick: Stalled with the reason, the last good revision kept.  A
state dir that cannot be written or a corrupt file in it ends the process with a one-line
``StateDirError``/``StateFileError``, after making sure no status says Ready.  Everything
written (ledger rows, audit lines, status) is committed per step, so a crash loses at most the
step in flight and the next tick, observing again, converges.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path

from allotment.backends.actions import Action, ActionResult, ClusterAction
from allotment.backends.diff import diff_policy
from allotment.backends.policy import desired_policy
from allotment.backends.protocol import Backend, Observation
from allotment.compile.model import CompiledConfig
from allotment.errors import BackendError, UsageError
from allotment.reconcile.active import is_start, maintenance_now, plan_cluster
from allotment.reconcile.audit import AuditLog, audit_lines, intent_lines
from allotment.reconcile.boost_audit import boost_transitions
from allotment.reconcile.capacity_drift import compare
from allotment.reconcile.charging import finished_runs, observed_runs
from allotment.reconcile.conditions import TickOutcome, set_conditions
from allotment.reconcile.control import Control, read_control
from allotment.reconcile.grace import Notice
from allotment.reconcile.health import read_health
from allotment.reconcile.leadership import Fence, no_fence
from allotment.reconcile.ledger import Ledger
from allotment.reconcile.memory_file import read_memory, save_memory
from allotment.reconcile.observation_file import save_observation
from allotment.reconcile.revisions import Choice, Revisions
from allotment.reconcile.skew import on_backend_clock
from allotment.reconcile.source import Source
from allotment.reconcile.stale_read import StaleRead, StaleReadGuard, apply_all
from allotment.reconcile.state_errors import (
    StateDirError,
    StateFileError,
    check_writable,
    state_error,
)
from allotment.reconcile.status import STATUS_FILE, Status, read_status, save_status
from allotment.reconcile.tick import Options, TickResult
from allotment.reconcile.tick_metrics import record_tick
from allotment.reconcile.yield_flags import kept_yields

log = logging.getLogger(__name__)
BACKEND_CONFIG = "BackendConfigIncomplete"  # the condition of _backend_config
Clock = Callable[[], float]
__all__ = ["Options", "Reconciler", "TickResult"]


class Reconciler:
    def __init__(
        self,
        backend: Backend,
        source: Source,
        state_dir: Path,
        options: Options | None = None,
        *,
        clock: Clock = time.time,
        source_label: str = "",
        timer: Clock = time.perf_counter,
        fence: Fence = no_fence,
        token: int | None = None,
    ) -> None:
        options = options or Options()
        self.backend, self.source, self.options, self.clock = backend, source, options, clock
        self.timer = timer  # how long a tick takes (monotonic; ``clock`` may be the backend's)
        self.state_dir = state_dir
        # every write below is made inside ``fence`` (reconcile.leadership): with replicas, an
        # old leader whose lease has gone writes nothing; ``token`` marks its audit lines
        self.fence, self.token = fence, token
        with fence():
            check_writable(state_dir)
            self.ledger = Ledger(state_dir / "ledger.sqlite")
            try:
                self.audit = AuditLog(state_dir / "audit.jsonl")  # repairs the log: a write
            except OSError as exc:
                raise StateDirError(f"{state_dir}/audit.jsonl: {exc.strerror or exc}") from exc
        self.status: Status = read_status(state_dir)
        self.status.backend = backend.name
        self.status.source = source_label
        self.status.interval_s = options.interval_s
        self.revisions = Revisions(source, options.history_limit)
        # what the core reads that the cluster does not keep: the job a requeued job made room
        # for, first submissions (Slurm resets submit_time at a requeue), debug backfill that
        # yields to a reservation, the usage frozen per fair-share epoch (memory_file)
        self.memory = read_memory(state_dir)
        self._suspended = False  # set per tick from the operator's requests
        # a cluster plan's preemptions wait a tick when its read went stale (stale_read)
        self._stale = StaleReadGuard(self.backend.observe)
        self.driving_config: CompiledConfig | None = None  # what the last tick drove

    @property
    def holding(self) -> bool:
        """Plan and dry-run only: ``--dry-run``, or suspended by an operator."""
        return self.options.dry_run or self._suspended

    def wants_tick(self) -> bool:
        """An operator asked for a tick (``allot reconcile now``, suspend, resume) that no tick
        has handled yet.  A control file that cannot be read asks for one: the tick reports it."""
        try:
            ctl = read_control(self.state_dir)
        except (StateDirError, StateFileError):
            return True
        handled = self.status.last_handled_reconcile_at
        return ctl.requested_at is not None and (handled is None or ctl.requested_at > handled)

    def _take_control(self, ctl: Control) -> None:
        st, s = self.status, ctl.suspended
        self._suspended = s is not None
        st.suspended_by = None if s is None else s.by
        st.suspended_since = None if s is None else s.since
        st.suspend_reason = "" if s is None else s.reason
        if ctl.requested_at is not None:
            st.last_handled_reconcile_at = ctl.requested_at

    def close(self) -> None:
        self.ledger.close()
        self.source.close()

    # ------------------------------------------------------------------------------ tick --
    def tick(self) -> TickResult:
        started = self.timer()
        now = self.clock()
        st = self.status
        st.ticks += 1
        st.last_tick = now
        result = TickResult(None)
        try:
            try:
                self._take_control(read_control(self.state_dir))
                self._tick(now, result)
            except (OSError, sqlite3.DatabaseError) as exc:
                raise state_error(exc, self.state_dir) from None
        except BackendError as exc:
            result.error = str(exc)
            set_conditions(st, TickOutcome.backend_failure(result.error), now)
        except (StateDirError, StateFileError) as exc:
            result.error = str(exc)
            set_conditions(st, TickOutcome.state_failure(result.error), now)
            record_tick(st, self.timer() - started)
            self._save_or_forget()
            raise
        counts = result.counts()
        st.last_tick_counts = counts
        for k, v in counts.items():
            st.action_counts[k] = st.action_counts.get(k, 0) + v
        record_tick(st, self.timer() - started)
        self._save_or_forget()
        return result

    def _save_or_forget(self) -> None:
        """Save the status; when the dir refuses, remove the old file if it can (a full disk
        still allows that), so no stale Ready outlives the failure, and raise."""
        try:
            with self.fence():
                save_status(self.state_dir, self.status)
        except StateDirError:
            # read-only: the unlink fails too, and readers see last_tick grow stale
            with contextlib.suppress(OSError):
                (self.state_dir / STATUS_FILE).unlink(missing_ok=True)
            raise

    def _tick(self, now: float, result: TickResult) -> None:
        st, opts = self.status, self.options
        # 1. fetch
        fetch_error = None
        try:
            self.source.fetch()
        except BackendError as exc:
            fetch_error = str(exc)
            log.warning("%s", fetch_error)
        # 2. choose
        choice = self.revisions.choose(st, now, fetch_error)
        if choice is None:
            msg = fetch_error or "no commit on the branch validates; nothing applied"
            set_conditions(st, TickOutcome.no_revision(msg, fetch_error is not None), now)
            result.error = msg
            return
        result.revision, result.newest = choice.sha, choice.newest
        result.fetch_error = fetch_error
        result.newest_rejected = choice.why_not_newest or None
        st.last_attempted_revision = choice.newest
        cluster = self._cluster(choice.config)
        # 3-4. policy
        driving, applied = self._policy(choice, cluster, now, result)
        self.driving_config = driving.config  # before active mode, which may fail
        # 5. active mode
        if opts.active:
            applied += self._active(driving.config, cluster, driving.sha, now, result)
        st.driving_revision = driving.sha
        # 6. conditions
        set_conditions(st, TickOutcome.of(result, applied, self.holding, st), now)

    def _cluster(self, config: CompiledConfig) -> str:
        names = sorted(config.clusters)
        if self.options.cluster is not None:
            if self.options.cluster not in config.clusters:
                raise UsageError(
                    f"--cluster {self.options.cluster}: not in the inventory"
                    f" (clusters: {', '.join(names) or 'none'})"
                )
            cluster = self.options.cluster
        else:
            cluster = names[0] if len(names) == 1 else config.largest_cluster()
            if len(names) > 1 and cluster != self.status.cluster:
                log.warning(
                    "the inventory has %d clusters (%s); driving the largest, %s"
                    " (--cluster chooses)",
                    len(names),
                    ", ".join(names),
                    cluster,
                )
        self.status.cluster = cluster
        adopt = getattr(self.backend, "adopt_inventory", None)
        if adopt is not None:  # the simulated backend builds its nodes from the inventory
            adopt(config.clusters[cluster])
        return cluster

    def _policy(
        self, choice: Choice, cluster: str, now: float, result: TickResult
    ) -> tuple[Choice, int]:
        """Sync the chosen revision's policy; returns the revision active mode drives (the last
        good one when the backend refused this one) and how many changes were applied."""
        st, opts = self.status, self.options
        config = choice.config
        policy = config.policy_for(cluster)
        before = len(result.results)
        try:
            desired = desired_policy(config, cluster, opts.tiers_s, backend_preempts=not opts.active)
            plan = diff_policy(desired, self.backend.observe_policy(), prune=policy.prune)
            st.prune_skipped = [f"{a.kind} {a.target}: {a.reason}" for a in plan.prune_skipped]
            if plan.prune_refused:
                st.prune_skipped.insert(0, plan.prune_refused)
            same = (
                choice.sha == st.last_applied_revision
                and config.inputs_sha256 == st.last_applied_inputs_sha256
            )
            actions: Sequence[Action] = plan.actions
            result.drift = [f"{a.kind} {a.target}: {a.reason}" for a in actions] if same else []
            st.drift = result.drift
            if result.drift and policy.drift == "report":
                actions = ()
            applied = self._run(actions, now, choice.sha, result)
            refused = next(
                (
                    f"{r.action.kind} {r.action.target}: {r.message}"
                    for r in result.results[before:]
                    if r.code == "failed"
                ),
                None,
            )
        except BackendError as exc:
            refused, applied = str(exc), 0
        if self.holding:
            return choice, applied
        if refused is None:
            st.last_applied_revision, st.last_applied_inputs_sha256 = (
                choice.sha,
                config.inputs_sha256,
            )
            st.rejected_revisions.pop(choice.sha, None)
            return choice, applied
        if choice.sha == st.last_applied_revision:
            raise BackendError(refused)
        st.rejected_revisions[choice.sha] = refused
        why = f"newest valid {choice.sha[:12]} was refused by the backend: {refused}"
        result.newest_rejected = why
        fallback = self.revisions.last_good(st, config.at, choice.newest, why)
        if fallback is None:
            raise BackendError(why)
        log.warning("%s; driving last good %s", why, fallback.sha[:12])
        return fallback, applied

    def _run(
        self, actions: Sequence[Action], now: float, sha: str, result: TickResult,
        split: Callable[[Sequence[Action]], StaleRead] = apply_all,
    ) -> int:
        """Dry-run every action, then record the intent, apply what ``split`` keeps of them
        (a cluster plan's: ``stale_read``), and record the outcome; returns how many changed
        something."""
        if not actions:
            return 0
        dry = self.backend.apply(actions, dry_run=True)
        if self.holding or any(r.code == "failed" for r in dry):
            result.results.extend(dry)
            if not self._suspended:  # held every tick of a suspension: counted, not logged
                self._audit(audit_lines(dry, at=now, revision=sha, dry_run=True))
            with self.fence():
                self.audit.rotate()  # dry-run outcomes only: no intent is open
            return 0
        kept = split(actions)
        self._audit(intent_lines(actions, at=now, revision=sha))
        with self.fence():
            applied = self.backend.apply(kept.apply)
        held = kept.deferred_results()
        done = _in_order(actions, applied + held)
        if held:
            log.info("%s; %d preemptions wait for the next tick", held[0].message, len(held))
        result.results.extend(done)
        self._audit(audit_lines(done, at=now, revision=sha, dry_run=False))
        with self.fence():
            self.audit.rotate()  # every intent has its outcome now (audit.py)
        return sum(1 for r in done if r.code in ("applied", "pruned"))

    def _capacity(self, config: CompiledConfig, cluster: str, obs: Observation, now: float) -> None:
        """Report (never correct) a cluster that is not the inventory's (``capacity_drift``)."""
        drift = compare(config.clusters[cluster], obs)
        self.status.capacity = drift
        reason = "InventoryMismatch" if drift.drifted else "InventoryMatches"
        if drift.drifted and drift.message() != getattr(self.status.condition("CapacityDrift"), "message", None):
            log.warning("capacity drift: %s", drift.message())
        self.status.set_condition("CapacityDrift", drift.drifted, reason, drift.message(), now)

    @cached_property
    def config_gaps(self) -> tuple[str, ...] | None:
        """What the backend's own config lacks for active mode (``Backend.config_warnings``;
        Slurm: ``slurm.conf``, ``backends/slurm/config_check``), read once a process, at its
        first active tick, each gap a warning in the log then; None: nothing is checked."""
        gaps = self.backend.config_warnings()
        for warning in gaps or ():
            log.warning("%s", warning)
        return gaps

    def _backend_config(self, now: float) -> None:
        """Report (never fix) ``config_gaps`` as the condition ``BackendConfigIncomplete`` on
        every active tick, for ``allot status``, ``/metrics`` and the alert rules.  A backend
        that checks nothing carries no such condition."""
        gaps = self.config_gaps
        if gaps is None:
            return
        reason, message = (
            ("ConfigWarnings", "; ".join(gaps)) if gaps
            else ("ConfigAsExpected", "the backend's config has what active mode needs")
        )
        self.status.set_condition(BACKEND_CONFIG, bool(gaps), reason, message, now)

    def _active(
        self, config: CompiledConfig, cluster: str, sha: str, now: float, result: TickResult
    ) -> int:
        st = self.status
        self._backend_config(now)
        raw = self.backend.observe()
        obs, check = on_backend_clock(raw, self.clock(), self.options.max_skew_s)
        st.clock_skew_s, result.skew = round(check.skew_s, 3), check
        with self.fence():
            save_observation(self.state_dir, obs)  # for explain --state and the live page
        self._capacity(config, cluster, obs, now)
        if not check.ok:
            log.warning("%s", check.message())
            return 0
        # charge what ended since the last observation (or in the window, on a first start)
        policy = config.policy_for(cluster)
        since = (
            st.last_backend_time if st.last_backend_time is not None else obs.at - policy.lookback_s
        )
        runs = observed_runs(obs, config, cluster)
        runs += finished_runs(self.backend.history(since), config, cluster)
        with self.fence():
            self.ledger.record(runs)
        st.last_backend_time = obs.at
        mem = self.memory
        usage = mem.usage.at(
            obs.at, policy.fairshare_period_s, lambda: self.ledger.usage(obs.at, policy.lookback_s)
        )
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
            evicted_by=mem.evicted_by.values(),
            submitted=mem.submitted.update(obs),
            yields=mem.yields,
            noticed=mem.noticed.values(),
        )
        before = len(result.results)
        changed = self._run(cplan.actions, now, sha, result, self._stale.split)
        done = {
            r.action.target
            for r in result.results[before:]
            if r.code == "applied" and r.action.kind == "requeue"
        }
        mem.evicted_by.observe(obs)  # kept while the job's requeue completes (job_memory)
        mem.noticed.observe(obs)
        for r in result.results[before:]:  # a session's notice, pinned to its run (reconcile.grace)
            a = r.action
            if r.code == "applied" and isinstance(a, ClusterAction) and a.kind == "notify":
                mem.noticed.remember(a.target, Notice(a.expect, obs.at), obs.at)
        # a flag holds for the run the core started: the start the backend carried out
        late = {
            r.action.target for r in result.results[before:]
            if r.code == "unchanged" and is_start(r.action)
        }
        on = {j.id for j in obs.jobs if j.state == "running"}
        mem.yields = kept_yields(mem.yields, on, cplan.decisions.starts, late)
        for p in cplan.decisions.preemptions:
            if p.job_id in done and p.for_job:
                mem.evicted_by.remember(p.job_id, p.for_job, obs.at)
        # every boost that began or stopped counting, once (boost_audit)
        lines, mem.boosts = boost_transitions(policy.boosts, mem.boosts, now, sha)
        self._audit(lines)
        with self.fence():
            save_memory(self.state_dir, mem)
        return changed

    def _audit(self, lines: list[str]) -> None:
        """Append to the audit log, fenced; with replicas each line names the lease token it
        was written under, so the log shows that no old leader wrote after a newer one."""
        if self.token is not None:
            lines = [json.dumps(json.loads(x) | {"token": self.token}, sort_keys=True) for x in lines]
        with self.fence():
            self.audit.append(lines)


def _in_order(actions: Sequence[Action], results: Sequence[ActionResult]) -> tuple[ActionResult, ...]:
    """``results`` (one per action, any order) in the order of ``actions``."""
    by = {id(r.action): r for r in results}
    return tuple(by[id(a)] for a in actions)
