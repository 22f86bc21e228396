"""Active mode, pure: turn one observation into the scheduling core's snapshot, run ``decide``,
and turn its decisions into cluster actions the backend can take.

Mapping (docs/operators-guide.md has the table):

* a job's QOS tier gives its declared minimum runtime (``unallocated`` = 0, free);
  ``protected_until`` = start + that runtime, capped by policy;
* pending jobs still waiting out a requeue delay, or held (priority 0), are left out: Slurm
  would not start them now, and setting a priority would release a hold;
* preemptions become requeues pinned to the run's start time (non-resumable jobs follow
  ``Policy.non_resumable``); the head of the pending order (``ordered`` jobs, 64 by default)
  becomes priorities ``PRIORITY_TOP - position``, far above anything Slurm's multifactor
  gives, so Slurm starts them first; the rest keep Slurm's own fair-share priority.  Bounding
  it keeps a tick to a bounded number of ``scontrol`` calls however long the queue is.  A
  priority set once stays pinned in Slurm (NOTES pitfall 17), so a job we pinned earlier keeps
  being updated to its current position even after it falls out of the head;
* nodes the health file (or a maintenance window) marks unhealthy are drained with a reason
  starting ``allotment:``; only such nodes are resumed, never one a person drained.

``evicted_by`` (job -> the job it was requeued for, kept by the reconciler) feeds the core's
anti-thrash rule.  A last guard re-checks every requeue against the minimum-runtime contract: a job inside its
minimum runtime is never touched, whatever the core said.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.backends.actions import DRAIN_PREFIX, ClusterAction, start_key
from allotment.backends.protocol import JobObs, Observation
from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.decisions import Decisions
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot

PRIORITY_TOP = 1_000_000
PINNED_FLOOR = PRIORITY_TOP // 2  # above any multifactor priority: a job here was pinned by us
UNKNOWN_WORK_S = 86_400.0  # Slurm does not know a job's work; only its time limit bounds it
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)  # snapshot times are Unix seconds


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    actions: tuple[ClusterAction, ...]
    decisions: Decisions
    skipped: tuple[str, ...] = ()  # core decisions the guard refused, with why


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
) -> Snapshot:
    """Jobs of accounts outside the budget tree (Slurm's ``root``, other tenants) are not the
    core's to schedule: their GPUs are taken off their nodes' capacity instead."""
    types = node_types(config, cluster)
    leaves = {n.name for n in config.nodes if n.leaf and n.active and cluster in n.clusters}
    pol = config.policy_for(cluster)
    cap, default = pol.min_runtime_cap_s, pol.default_min_runtime_s
    foreign: dict[str, int] = {}
    ev = evicted_by or {}
    running, pending = [], []
    at = obs.at
    for j in obs.jobs:
        if j.state == "running":
            if j.start is None or not j.nodes or j.gpus <= 0:
                continue
            per, extra = divmod(j.gpus, len(j.nodes))
            placement = tuple((n, per + (1 if i < extra else 0)) for i, n in enumerate(j.nodes))
            if j.account not in leaves:
                for n, g in placement:
                    foreign[n] = foreign.get(n, 0) + g
                continue
            declared = default if j.min_runtime_s is None else j.min_runtime_s
            mr = float(max(0, min(declared, cap)))
            spec = _spec(j)
            who = ev.get(j.id)
            running.append(RunningJob(spec, j.start, placement, mr > 0, j.start + mr, 0.0, who))
        elif j.priority > 0 and j.account in leaves and (j.eligible is None or j.eligible <= at):
            pending.append(
                PendingJob(_spec(j), j.eligible or j.submit, j.submit, 0.0, ev.get(j.id))
            )
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
    return Snapshot(nodes, tuple(running), tuple(pending), dict(usage))


def _spec(j: JobObs) -> JobSpec:
    mr = None if j.min_runtime_s is None else float(j.min_runtime_s)
    return JobSpec(j.id, j.submit, j.account, j.gpus, UNKNOWN_WORK_S, j.user, None, mr, j.resumable)


def plan_cluster(
    obs: Observation,
    config: CompiledConfig,
    cluster: str,
    usage: Mapping[str, float],
    unhealthy: Mapping[str, str],
    *,
    ordered: int = 64,
    evicted_by: Mapping[str, str] | None = None,
) -> ClusterPlan:
    """Drains and resumes from health, requeues from the core's preemptions, priorities from
    its pending order; sorted in the documented total order."""
    pol = config.policy_for(cluster)
    ctx = build_context(config, cluster, epoch=EPOCH)
    snap = snapshot(obs, config, cluster, usage, unhealthy, evicted_by)
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
    for p in decisions.preemptions:
        job = by_id.get(p.job_id)
        if job is None or job.state != "running" or job.start is None:
            continue
        mr = min_runtime(job, config, cluster)
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

    # 3. the pending order -> priorities
    for r in decisions.order:
        job = by_id.get(r.job_id)
        if r.position >= ordered and (job is None or job.priority < PINNED_FLOOR):
            continue
        want = max(1, PRIORITY_TOP - r.position)
        if job is not None and job.state == "pending" and job.priority != want:
            actions.append(ClusterAction("set_priority", job.id, "order", r.reason, value=want))
    actions.sort(key=ClusterAction.sort_key)
    return ClusterPlan(tuple(actions), decisions, tuple(skipped))
