"""``allot explain JOB --run DIR``: why a job waits, runs or was preempted, from what the
scheduler recorded (its event log, its decision reasons, the Fair Tree snapshots), never a re-run.

The within-team position is the core's own score (``core.priority.Scorer``, the function the
scheduler sorts by) applied to the job and its teammates as the event log has them at that moment;
the minimum runtime is the core's own clamp (``Scheduler.min_runtime``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from allotment.compile.model import CompiledConfig, Policy
from allotment.core.context import Context, build_context
from allotment.core.epoch import epoch_of
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import (
    PriorityScore,
    Scorer,
    active_boosts,
    boost_of,
    dependants,
    propagate,
)
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend
from allotment.errors import UsageError
from allotment.legible.replay import Moment, moment
from allotment.legible.run_index import MomentIndex
from allotment.legible.rundir import Event, RunDir
from allotment.legible.runview import run_tree_inputs
from allotment.legible.tree import TreeRow, build_tree
from allotment.sim.overrides import apply_overrides


@dataclass(frozen=True, slots=True)
class Ranked:
    job: str
    position: int  # 1-based within the team
    of: int
    score: PriorityScore


@dataclass(frozen=True, slots=True)
class BoostUse:
    """A boost that matches the job (``core.boosts.boost_of``, the one matching rule), and
    whether it counts at the moment explained: ``active`` (added to the score) or expired (no
    effect).  Both are shown, so a job that lost its boost says so (issue 28, item 4)."""

    target: str
    amount: float
    expires_t: float  # run-relative seconds
    reason: str
    approver: str
    active: bool


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything explain says, before words: the job, its state at ``t`` and the evidence."""

    spec: JobSpec
    t: float
    state: str  # not-submitted | waiting | running | finished | rejected
    path: tuple[TreeRow, ...]  # the job's account and its ancestors, root excluded, top first
    team: Ranked | None
    run_start: float | None
    run_nodes: tuple[str, ...]
    allocated: bool
    min_runtime_s: float
    preempted: Event | None  # the last preemption of this job at or before t
    preempted_run_s: float  # how long the run it ended had lasted
    reservation: Event | None
    history: tuple[Event, ...]
    window_s: float
    gpus_per_node: int
    boosts: tuple[BoostUse, ...] = ()


def explain_run(
    run: RunDir, config: CompiledConfig, job: str, t: float | None, index: MomentIndex | None = None
) -> Facts:
    """With ``index`` (the run's moment index, ``run`` then read by ``read_run_head``) the
    moment and the job's history come from it; without, from ``run.events``: the same facts."""
    spec = run.jobs.get(job)
    if spec is None:
        raise UsageError(f"job {job!r} is not in {run.path / 'trace.jsonl'}")
    ctx = build_context(config, run.cluster, mode=str(run.meta.get("policy", "budgets")), epoch=run.t0,
                        policy=_run_policy(run, config))
    history = tuple(index.history(job) if index is not None else run.job_events(job))
    when = t if t is not None else _default_time(history, run.end)
    m = index.moment(when) if index is not None else moment(run, when)
    rows = build_tree(run_tree_inputs(run, m))
    by_name = {r.name: r for r in rows}
    path = tuple(by_name[n] for n in ctx.paths.get(spec.account, ())[1:] if n in by_name)
    sched = _scheduler(ctx, config)
    past = [e for e in history if e.t <= when]
    start = next((e for e in reversed(past) if e.event == "start"), None)
    pre = next((e for e in reversed(past) if e.event == "preempt"), None)
    ran = 0.0
    if pre is not None:
        began = [e for e in past if e.event == "start" and e.t <= pre.t]
        ran = pre.t - began[-1].t if began else 0.0
    res = next((e for e in reversed(past) if e.event in ("reserve", "release")), None)
    if res is not None and (res.event == "release" or (start is not None and start.t >= res.t)):
        res = None  # released, or fulfilled by a start since
    return Facts(
        spec=spec, t=when, state=_state(job, m), path=path,
        team=_team_rank(run, ctx, m, spec, sched) if job in m.pending else None,
        run_start=start.t if job in m.running and start else None,
        run_nodes=m.running[job].nodes if job in m.running else (),
        allocated=m.running[job].allocated if job in m.running else sched.state.min_runtime(spec) > 0,
        min_runtime_s=sched.state.min_runtime(spec), preempted=pre, preempted_run_s=ran,
        reservation=res if job in m.pending else None, history=history,
        window_s=float(ctx.policy.lookback_s),
        gpus_per_node=max((g.gpus_per_node for g in config.clusters[run.cluster].node_groups), default=8),
        boosts=_boosts(ctx, spec, epoch_of(when, ctx.policy.fairshare_period_s)),
    )


def _boosts(ctx: Context, spec: JobSpec, t: float) -> tuple[BoostUse, ...]:
    """The policy's boosts that match ``spec``, each active or expired at the pass's epoch ``t``
    (when the core reads them: ``active_boosts``)."""
    out = []
    for b in ctx.policy.boosts:
        if boost_of({b.target: b.amount}, spec.id, spec.user, spec.account) > 0:
            until = ctx.boost_expiry_s(b.expires)
            out.append(BoostUse(b.target, b.amount, until, b.reason, b.approver, t < until))
    return tuple(out)


def _run_policy(run: RunDir, config: CompiledConfig) -> Policy:
    """The policy the run was scored with: the config's, with the run's ``--set`` knobs (kept
    in meta.json), so a run made with ``--set within_team.mode=adaptive`` is explained in it."""
    pol = config.policy_for(run.cluster)
    overrides = run.meta.get("set")
    return apply_overrides(pol, {str(k): str(v) for k, v in overrides.items()}) if isinstance(overrides, dict) else pol


def _default_time(history: tuple[Event, ...], end: float) -> float:
    """The moment most worth explaining: the end of the run, or just after the job finished."""
    last = history[-1] if history else None
    return last.t if last is not None and last.event in ("end", "reject") else end


def _state(job: str, m: Moment) -> str:
    if job in m.running:
        return "running"
    if job in m.pending:
        return "waiting"
    if job in m.done:
        return "finished"
    if job in m.rejected:
        return "rejected"
    return "not-submitted"


def _scheduler(ctx: Context, config: CompiledConfig) -> Scheduler:
    cl = config.clusters[ctx.cluster]
    nodes = tuple(NodeState(n, g.gpus_per_node, True, g.gpu_type) for g in cl.node_groups for n in g.node_names)
    return Scheduler(ctx, nodes)


def _team_rank(run: RunDir, ctx: Context, m: Moment, spec: JobSpec, sched: Scheduler) -> Ranked:
    """Score every pending job of the team as the core would at ``m.t`` and find this one."""
    # dependencies count only within the team (``propagate``), and only among the jobs the
    # scheduler knew then: submitted by ``m.t`` and not gone (sim/known_dependencies.py)
    team = [s for s in run.account_jobs(spec.account) if s.submit <= m.t and s.id not in m.done
            and s.id not in m.rejected]
    declared = propagate(team)
    used: dict[str, int] = {}
    user_gpus: dict[tuple[str, str], int] = {}
    for iv in m.running.values():
        for n in iv.nodes:
            used[n] = used.get(n, 0) + iv.gpus // max(1, len(iv.nodes))
        s = run.jobs.get(iv.job)
        if s is not None:
            user_gpus[(s.account, s.user)] = user_gpus.get((s.account, s.user), 0) + iv.gpus
    sizes = _node_sizes(sched)
    max_free = max((g - used.get(n, 0) for n, g in sizes.items() if n not in m.drained), default=0)
    pending_gpus = sum(run.jobs[j].gpus for j in m.pending if j in run.jobs)
    running_gpus = sum(iv.gpus for iv in m.running.values())
    load = (pending_gpus + running_gpus) / max(1, ctx.capacity_gpus)
    t = epoch_of(m.t, ctx.policy.fairshare_period_s)  # the pass reads time-varying signals here
    scorer = Scorer(ctx, t, load, max_free, UserGpus.of(user_gpus), active_boosts(ctx, t), dependants(team))
    scored = []
    for j, eligible in m.pending.items():
        s = run.jobs.get(j)
        if s is None or s.account != spec.account:
            continue
        p = Pend(s, eligible, eligible, m.progress_s.get(j, 0.0), declared.get(j, s.priority), None, s.account)
        sc = scorer.parts(p)
        scored.append((-sc.total, eligible, j, sc))
    scored.sort(key=lambda x: (x[0], x[1], x[2]))
    pos = next(i for i, x in enumerate(scored) if x[2] == spec.id)
    return Ranked(spec.id, pos + 1, len(scored), scored[pos][3])


def _node_sizes(sched: Scheduler) -> dict[str, int]:
    pool = sched.state.pool
    return {name: pool.total[i] for name, i in pool.index.items()}


def facts_json(f: Facts, run: RunDir) -> dict[str, Any]:
    """The facts for a machine.  Wall-clock times are RFC 3339 UTC (``time``, ``start``,
    ``protected_until``, ``at``); the run-relative seconds they come from (seconds since the
    run's start, as the event log keeps them) are kept beside them, always named ``t_s`` or
    ``*_t_s``."""
    from allotment.legible.explain_words import summary
    from allotment.legible.words import utc

    def when(t: float) -> str:
        return utc(run.t0, t)

    d: dict[str, Any] = {
        "job": f.spec.id, "account": f.spec.account, "user": f.spec.user, "kind": f.spec.kind,
        "gpus": f.spec.gpus, "t_s": f.t, "time": when(f.t), "state": f.state,
        "summary": summary(f, run),
        "path": [asdict(r) for r in f.path],
        "min_runtime_s": f.min_runtime_s,
        "events": [_event_json(e, when(e.t)) for e in f.history if e.t <= f.t],
    }
    if f.team is not None:
        d["team_position"] = {"position": f.team.position, "of": f.team.of, "score": asdict(f.team.score)}
    if f.boosts:
        d["boosts"] = [asdict(b) | {"expires": when(b.expires_t)} for b in f.boosts]
    if f.run_start is not None:
        until = f.run_start + f.min_runtime_s if f.allocated else f.run_start
        d["run"] = {"start": when(f.run_start), "start_t_s": f.run_start, "nodes": list(f.run_nodes),
                    "allocated": f.allocated, "protected_until": when(until), "protected_until_t_s": until}
    if f.preempted is not None:
        d["preemption"] = {"t_s": f.preempted.t, "time": when(f.preempted.t), "by": f.preempted.by,
                           "rule": f.preempted.rule, "reason": f.preempted.reason, "ran_s": f.preempted_run_s}
    if f.reservation is not None:
        at = f.reservation.at
        d["reservation"] = {"nodes": list(f.reservation.nodes), "at": None if at is None else when(at), "at_t_s": at}
    return d


def _event_json(e: Event, time: str) -> dict[str, Any]:
    """The event as it was logged (its run-relative ``t`` as ``t_s``, ``at`` as ``at_t_s``) with
    its wall-clock ``time``: empty fields left out, ``allocated`` only on starts."""
    names = {"t": "t_s", "at": "at_t_s"}
    d = {names.get(k, k): v for k, v in asdict(e).items()
         if k != "allocated" and v not in ("", (), None) and not (k != "t" and v == 0.0)}
    d["time"] = time
    if e.event == "start":
        d["allocated"] = e.allocated
    return d
