"""Active mode, pure: turn one observation into the scheduling core's snapshot, run ``decide``,
and turn its whole decision into cluster actions the backend can take.

Mapping (docs/operators-guide.md has the table):

* a job's QOS tier gives its declared minimum runtime (``unallocated`` = 0, free);
  ``protected_until`` = start + that runtime, capped by policy; its time limit is its work
  bound (the core estimates ends from it; ``UNKNOWN_WORK_S`` only when Slurm has none); its
  GPUs and per-node shape are the whole job's (``backends.slurm.shape``);
* pending jobs Slurm could not start now are left out of the pass: held (priority 0; setting a
  priority would release the hold), waiting on a dependency, or still inside their requeue
  delay (``EligibleTime`` = requeue + ``cred_expire`` + 1 s).  A requeued job's age counts from
  its first submission, not from its new eligible time, as in the simulator.  Slurm resets a
  job's ``submit_time`` to the requeue, so the reconciler remembers each job's submission from
  before its first requeue (``submitted``, ``reconcile.first_submit``).  Without it a requeued
  job lost its place to a younger one of the same rank that the simulator (and the core's own
  record) kept behind it (seed 15 at 2 s ticks: f044 started before f038, batch p90 doubled);
* a job's declared priority and deadline (``JobObs.declared_priority``, ``.deadline``: Slurm's
  ``allot.priority=N`` comment or ``--nice``, and ``--deadline``) are its spec's, and so are
  the jobs it still waits for (``.depends_on``: ``--dependency``), so the within-team order is
  the simulator's; a job waiting on a dependency is not queued but handed to the core as
  ``Snapshot.waiting``, so its urgency reaches its prerequisites; Slurm's computed priority is
  never read as declared;
* preemptions become requeues pinned to the run's start time (non-resumable jobs follow
  ``Policy.non_resumable``).  In active mode the backend's own preemption is off (the tier QOS
  preempt nothing, see ``backends.policy.qos_tiers``), so every requeue is the core's;
* starts and the pending order become priorities (``reconcile.pinned_order``): the jobs the
  core starts now go in a band above every job it keeps waiting, the waiting head (``ordered``
  jobs, 64 by default) below them in the core's order, all far above Slurm's multifactor
  values, so Slurm's next scheduling cycle starts exactly the core's starts and then stops at
  the first waiting job.  Each start is also pinned to the nodes the core placed it on
  (``ReqNodeList``): without that Slurm's own node selection put jobs elsewhere and every
  reservation and preemption after it diverged from the core's plan.  Only priorities that
  break the wanted order are rewritten (starts are re-sent while pending).  A priority set once
  stays pinned in Slurm (NOTES pitfall 17), so a job we pinned keeps being placed even after it
  falls out of the head;
* with ``job_submit.lua`` installed, Slurm holds every new job (begin time ten years out) until
  the core starts it, so it never starts one at submission or between two ticks on nodes of its
  own choosing; a job that leaves the start band pending (requeued, or a start Slurm did not
  carry out) is held again, keeping its requeue delay.  ``backends.slurm.parse`` reads a held
  job's real eligibility back (a new one is startable at once, aged from submission);
* nodes the health file (or a maintenance window) marks unhealthy are drained with a reason
  starting ``allotment:``; only such nodes are resumed, never one a person drained.

``evicted_by`` (job -> the job it was requeued for, kept by the reconciler) feeds the core's
anti-thrash rule.  A last guard re-checks every requeue against the minimum-runtime contract: a job inside its
minimum runtime is never touched, whatever the core said (a job on lent session-pool GPUs has
none: ``core.session_pool.lent_runs``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass, field, replace

from allotment.backends.actions import DRAIN_PREFIX, Action, ClusterAction, start_key
from allotment.backends.protocol import JobObs, Observation
from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.decisions import Decisions, Start
from allotment.core.epoch import epoch_of
from allotment.core.jobs import JobSpec
from allotment.core.session_pool import lent_runs
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.reconcile.grace import Notice, in_grace, noticed_at
from allotment.reconcile.pinned_order import (
    PINNED_FLOOR,
    PRIORITY_TOP,
    START_FLOOR,
    is_pinned,
    is_start_band,
    pin_order,
)

UNKNOWN_WORK_S = 86_400.0  # a job without a time limit: the core still needs a work bound
# pending reasons under which Slurm would not start a job now, whatever its priority
NOT_STARTABLE = frozenset({"Dependency", "DependencyNeverSatisfied", "JobHeldUser", "JobHeldAdmin"})
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)  # snapshot times are Unix seconds
START_RULE = "start"  # the rule of the action that starts a job the core starts now


def is_start(a: Action) -> bool:
    """Is ``a`` a start (``priority_actions``): what ``stale_read`` and the yield flags ask."""
    return isinstance(a, ClusterAction) and a.kind == "set_priority" and a.rule == START_RULE


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    actions: tuple[ClusterAction, ...]
    decisions: Decisions
    skipped: tuple[str, ...] = ()  # core decisions the guard refused, with why


@dataclass(slots=True)
class EpochUsage:
    """The window usage the core reads, frozen for each fair-share epoch (``core.epoch``).

    Why: ``decide`` expects the usage at the pass's epoch, as the simulator gives it, so that
    ranks only move at epoch boundaries.  The reconciler read the ledger at every tick instead:
    in the fidelity replay the teams' fair-share ranks drifted tick by tick while the
    simulated ones stayed put for the whole epoch, and the two cores ordered the same queue
    differently.  The ledger holds hourly buckets, so the value is the one read by the first
    tick of the epoch (late by at most one tick's usage)."""

    epoch: float | None = None
    usage: dict[str, float] = field(default_factory=dict)

    def at(self, now: float, period_s: float, read: Callable[[], dict[str, float]]) -> dict[str, float]:
        e = epoch_of(now, period_s)
        if self.epoch != e:
            self.epoch, self.usage = e, read()
        return self.usage


def min_runtime(job: JobObs, config: CompiledConfig, cluster: str) -> float:
    """The core's one clamp (core.contract.min_runtime) applied to an observed job."""
    from allotment.core.contract import min_runtime as clamp

    return clamp(job.min_runtime_s, config.policy_for(cluster))


def node_types(config: CompiledConfig, cluster: str) -> dict[str, str]:
    return {n: g.gpu_type for g in config.clusters[cluster].node_groups for n in g.node_names}


def maintenance_now(config: CompiledConfig, cluster: str, now: float) -> dict[str, str]:
    when = dt.datetime.fromtimestamp(now, dt.UTC)
    out: dict[str, str] = {}
    for m in config.clusters[cluster].maintenance:
        start = m.start if m.start.tzinfo else m.start.replace(tzinfo=dt.UTC)
        end = m.end if m.end.tzinfo else m.end.replace(tzinfo=dt.UTC)
        if start <= when < end:
            for n in m.nodes:
                out.setdefault(n, f"maintenance: {m.reason}")
    return out


def snapshot(
    obs: Observation,
    config: CompiledConfig,
    cluster: str,
    usage: Mapping[str, float],
    unhealthy: Mapping[str, str],
    evicted_by: Mapping[str, str] | None = None,
    submitted: Mapping[str, float] | None = None,
    yields: Set[str] = frozenset(),
    noticed: Mapping[str, Notice] | None = None,
) -> Snapshot:
    """Jobs of accounts outside the budget tree (Slurm's ``root``, other tenants) are not the
    core's to schedule: their GPUs are taken off their nodes' capacity instead.  ``yields``: the
    running jobs the core started as debug backfill that yields to a reservation
    (``Start.yields``, kept by the reconciler like ``evicted_by``); ``noticed``: the notices
    given to sessions (``core.session_grace``), each counted for the run it was given to."""
    types = node_types(config, cluster)
    leaves = {n.name for n in config.nodes if n.leaf and n.active and cluster in n.clusters}
    pol = config.policy_for(cluster)
    cap, default = pol.min_runtime_cap_s, pol.default_min_runtime_s
    foreign: dict[str, int] = {}
    ev = evicted_by or {}
    first = submitted or {}
    running, pending = [], []
    waiting: list[JobSpec] = []  # known, waiting for other jobs: they lend their urgency (core.snapshot)
    live = {j.id for j in obs.jobs}
    at = obs.at
    for j in obs.jobs:
        if j.restarts and j.id in first:
            j = replace(j, submit=first[j.id])  # Slurm reset it at the requeue
        if j.state == "running":
            if j.start is None or not j.nodes or j.gpus <= 0:
                continue
            placement = _placement(j)
            if j.account not in leaves:
                for n, g in placement:
                    foreign[n] = foreign.get(n, 0) + g
                continue
            declared = default if j.min_runtime_s is None else j.min_runtime_s
            mr = float(max(0, min(declared, cap)))
            spec = _spec(j)
            who = ev.get(j.id)
            running.append(RunningJob(spec, j.start, placement, mr > 0, j.start + mr, 0.0, who,
                                      yields_to_reservation=j.id in yields,
                                      noticed_at=noticed_at(noticed or {}, j.id, start_key(j.start))))
        elif j.account in leaves and waits(j, live):
            waiting.append(_spec(j))
        elif j.account in leaves and startable(j, at):
            age_from = j.submit if j.restarts else (j.eligible or j.submit)
            pending.append(PendingJob(_spec(j), age_from, j.submit, 0.0, ev.get(j.id)))
    nodes = tuple(
        NodeState(
            n.name,
            max(0, n.gpus - foreign.get(n.name, 0)),
            not (n.down or n.name in unhealthy),
            types.get(n.name),
        )
        for n in obs.nodes
    )
    known = {n.name for n in nodes}
    running = [r for r in running if all(n in known for n, _ in r.placement)]
    return Snapshot(nodes, tuple(running), tuple(pending), dict(usage), tuple(waiting))


def waits(j: JobObs, live: Set[str]) -> bool:
    """Is this pending job waiting for other jobs?  Slurm says so (reason ``Dependency``; it
    drops each dependency from the field once met); Kubernetes enforces none, so there a job
    waits while a job its ``allotment.dev/depends-on`` names is still running or pending (one
    that is gone has ended)."""
    return j.state == "pending" and bool(j.depends_on) and (
        j.reason == "Dependency" or any(d in live for d in j.depends_on))


def startable(j: JobObs, at: float) -> bool:
    """Could Slurm start this pending job now?  Not held, no unmet dependency, requeue delay
    over (a ``BeginTime`` reason lags behind the clock by up to one scheduling cycle)."""
    return (
        j.priority > 0
        and j.reason not in NOT_STARTABLE
        and (j.eligible is None or j.eligible <= at)
    )


def _placement(j: JobObs) -> tuple[tuple[str, int], ...]:
    if len(j.node_gpus) == len(j.nodes):
        return tuple(zip(j.nodes, j.node_gpus, strict=True))
    per, extra = divmod(j.gpus, len(j.nodes))
    return tuple((n, per + (1 if i < extra else 0)) for i, n in enumerate(j.nodes))


def _spec(j: JobObs) -> JobSpec:
    mr = None if j.min_runtime_s is None else float(j.min_runtime_s)
    work = j.time_limit_s if j.time_limit_s is not None else UNKNOWN_WORK_S
    return JobSpec(j.id, j.submit, j.account, j.gpus, work, j.user, j.gpus_per_node, mr, j.resumable,
                   priority=j.declared_priority, deadline=j.deadline, depends_on=j.depends_on, kind=j.kind or "batch",
                   partition=j.partition or None, time_limit=j.time_limit_s)


def plan_cluster(
    obs: Observation,
    config: CompiledConfig,
    cluster: str,
    usage: Mapping[str, float],
    unhealthy: Mapping[str, str],
    *,
    ordered: int = 64,
    evicted_by: Mapping[str, str] | None = None,
    submitted: Mapping[str, float] | None = None,
    yields: Set[str] = frozenset(),
    noticed: Mapping[str, Notice] | None = None,
) -> ClusterPlan:
    """Drains and resumes from health, requeues from the core's preemptions, priorities from
    its pending order; sorted in the documented total order."""
    pol = config.policy_for(cluster)
    ctx = build_context(config, cluster, epoch=EPOCH)
    # the collector kept out of the tick's bulk allocation, as the simulator runs every pass
    # (config.bulk: decide() makes a record per job and no cycles; with 10,000 pending jobs the
    # collector was about 37 ms of an 80 ms scheduler build, docs/benchmarks.md)
    with bulk_allocation():
        snap = snapshot(obs, config, cluster, usage, unhealthy, evicted_by, submitted, yields, noticed)
        decisions = decide(snap, ctx, obs.at)
    actions: list[ClusterAction] = []
    skipped: list[str] = []

    # 1. health: drain what is unhealthy, resume only what we drained
    for n in obs.nodes:
        why = unhealthy.get(n.name)
        if why is not None and not n.drain:
            actions.append(ClusterAction("drain", n.name, "health", why))
        elif why is None and n.drain and n.reason.startswith(DRAIN_PREFIX):
            actions.append(ClusterAction("resume", n.name, "health", "healthy again"))

    # 2. preemptions (and drains of unhealthy nodes) -> requeue, guarded
    by_id = {j.id: j for j in obs.jobs}
    # a job on lent session-pool GPUs has no minimum runtime (core.session_pool, rule 2): the
    # session the core took them back for must not wait out the borrower's tier
    lent = lent_runs(pol.interactive, [n.name for n in snap.nodes], pol.non_resumable == "run_to_completion",
                     snap.running)
    for p in decisions.preemptions:
        job = by_id.get(p.job_id)
        if job is None or job.state != "running" or job.start is None:
            continue
        mr = 0.0 if job.id in lent else min_runtime(job, config, cluster)
        if mr > 0 and obs.at < job.start + mr:
            skipped.append(f"{job.id}: inside its minimum runtime ({p.reason})")
            continue
        if not job.resumable and pol.non_resumable == "run_to_completion":
            skipped.append(f"{job.id}: not resumable, policy runs it to completion")
            continue
        cancel = not job.resumable and pol.non_resumable == "cancel"
        key = start_key(job.start)
        if cancel:
            actions.append(ClusterAction("cancel", job.id, p.rule, p.reason, expect=key))
        else:
            actions.append(ClusterAction("requeue", job.id, p.rule, p.reason, expect=key))
    # ... and a session the core must stop first gets its notice (core.session_grace): Slurm
    # signals it, Kubernetes annotates its pods; the core stops it after the grace
    for told in decisions.notices:
        job = by_id.get(told.job_id)
        if job is None or job.state != "running" or job.start is None:
            continue
        actions.append(ClusterAction("notify", job.id, told.rule,
                                     f"{told.reason}; stopped after {told.grace_s:.0f}s of grace",
                                     expect=start_key(job.start), grace_s=int(told.grace_s),
                                     restore_hook=pol.interactive.restore_hook))
    skipped.extend(in_grace(obs, noticed or {}, pol.interactive.grace_s))

    # 3. jobs the policy rejects at submission (core.contract.refusal) -> cancel, as the
    #    simulator rejects them on arrival
    for r in decisions.refusals:
        job = by_id.get(r.job_id)
        if job is not None and job.state == "pending":
            actions.append(ClusterAction("cancel", job.id, "refused", r.reason))

    # 4. starts, then the pending order -> priorities (only those that break the order)
    actions.extend(priority_actions(decisions, obs, ordered))
    actions.sort(key=ClusterAction.sort_key)
    return ClusterPlan(tuple(actions), decisions, tuple(skipped))


def priority_actions(decisions: Decisions, obs: Observation, ordered: int) -> list[ClusterAction]:
    """The core's starts in the start band, each released and pinned to the nodes the core
    placed it on, re-sent on every tick it is still pending (Slurm may not have started it yet,
    and the core may place it elsewhere now); then its waiting head in the waiting band, then
    pinned jobs it no longer ranks parked at the floor; see ``reconcile.pinned_order``.

    Only a start releases a job: a waiting job released too was started by Slurm the moment
    GPUs freed between two ticks, on nodes of Slurm's choosing (8 of 63 runs on the fidelity
    replay).  For the same reason a job leaving the start band (requeued, or a start Slurm did
    not carry out) is held again and unpinned, keeping its eligibility."""
    current = {j.id: j.priority for j in obs.jobs if j.state == "pending" and j.priority > 0}
    by_id = {j.id: j for j in obs.jobs}
    starts: dict[str, Start] = {}
    for s in decisions.starts:
        if s.job_id in current:
            starts.setdefault(s.job_id, s)
    waiting: dict[str, str] = {}
    for r in decisions.order:
        head = r.position < ordered or is_pinned(current.get(r.job_id, 0))
        if r.job_id in current and r.job_id not in starts and r.job_id not in waiting and head:
            waiting[r.job_id] = r.reason
    up = pin_order(list(starts), current, START_FLOOR, PRIORITY_TOP)
    down = pin_order(list(waiting), current, PINNED_FLOOR, START_FLOOR)
    for job_id, prio in current.items():
        if job_id not in starts and job_id not in waiting and is_pinned(prio) and prio != PINNED_FLOOR:
            down[job_id] = PINNED_FLOOR
            waiting[job_id] = "pinned earlier, not ranked now: parked below the ranked jobs"
    for job_id in waiting:  # every job leaving the start band gets a new value, so an action
        if is_start_band(current[job_id]):
            down.setdefault(job_id, current[job_id])
    out = [
        ClusterAction(
            "set_priority",
            job_id,
            START_RULE,
            s.reason,
            value=up.get(job_id, current[job_id]),
            nodes=tuple(n for n, _ in s.placement),
            release=True,
        )
        for job_id, s in starts.items()
    ]
    for job_id, value in down.items():
        j = by_id[job_id]
        leaving = is_start_band(current[job_id])
        out.append(
            ClusterAction(
                "set_priority",
                job_id,
                "order",
                waiting[job_id],
                value=value,
                nodes=() if leaving else None,
                hold_eligible=(j.eligible or j.submit) if leaving else None,
            )
        )
    return out
