"""From per-seed simulation metrics to what the comment says: per team, its demand, what it was
owed and what it was delivered (charged), in GPU-hours per week of the simulated cluster, on each
side, and the 90% interval of the paired difference.

The one rule of the check lives in :func:`flag`: a team is flagged only when the whole 90%
interval of its paired change lies below its line (``plan/cut_confirmation.py``: zero for a team
the change cuts by at least that share of its entitlement, a drop of the policy's ``flag_delivered_drop`` of what it got for any other),
**and** that test survives Holm's correction (``plan/holm.py``) within its family: the teams the
change cuts, or every other team of the plan (fifteen teams each tested alone would raise a false
flag in about half the plans).

The simulator's metric names are read here and nowhere else (``TEAM_DELIVERED`` and friends),
defensively: a missing key reads as "not reported", never as a crash.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from allotment.compile.model import CompiledConfig
from allotment.plan.cut_confirmation import judge
from allotment.plan.diff import diff_configs
from allotment.plan.holm import ALPHA, holm_in_families
from allotment.plan.model import Capacity, Impact, KindWait, TeamImpact
from allotment.plan.stats import Interval, p_below, paired_interval
from allotment.sim.job_kind import JOB_KINDS

WEEK_DAYS = 7.0
# metric paths in ``SimResult.metrics`` (see allotment.sim.metrics)
# metric paths in the measured part's metrics (see allotment.sim.window), GPU-hours of the cluster
TEAM_DELIVERED = ("charged_gpu_hours",)  # allocated: what the team's budget paid for and got
TEAM_OWED = ("owed_gpu_hours",)
TEAM_DEMAND = ("demand_gpu_hours",)
TEAM_P90_WAIT = ("wait_p90_s",)
RUN_WAIT = "wait"  # RUN_WAIT, kind, "p50" | "p90": the run's first-start wait per job kind
RUN_DAYS = ("days",)
RUN_OCCUPANCY = ("occupancy",)
RUN_IN_SERVICE = ("in_service_gpu_hours",)
RUN_CHARGED = ("charged_gpu_hours",)
RUN_UNALLOCATED = ("unallocated_gpu_hours",)
WEEK_HOURS = 168.0


class RunLike(Protocol):
    @property
    def side(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def metrics(self) -> Mapping[str, Any]: ...
    @property
    def cached(self) -> bool: ...


def num(d: Any, path: Sequence[str]) -> float | None:
    cur = d
    for k in path:
        if not isinstance(cur, Mapping) or k not in cur:
            return None
        cur = cur[k]
    return float(cur) if isinstance(cur, (int, float)) and not isinstance(cur, bool) else None


def drop_p_value(before_mean: float, differences: list[float], line: float) -> float:
    """One-sided p-value of "the team's change is not below ``line``": the test whose rejection
    at 5% is :func:`flag`'s interval rule, and which Holm's correction ranks."""
    if before_mean <= 0:
        return 1.0
    return p_below(differences, line)


def flag(before_mean: float, interval: Interval, line: float) -> bool:
    """The check's rule: the whole interval lies below ``line`` (a drop, ``drop_line``).  That
    implies the interval excludes zero and asks the drop beyond the line with the same
    confidence, so a team whose mean drop only grazes the line is not flagged on one seed list
    and cleared on the next.  A team that got nothing before cannot lose anything.
    """
    return (
        before_mean > 0
        and interval.excludes_zero
        and interval.high < line
    )


def _mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.fmean(vals) if vals else None


def _weekly(metrics: Mapping[str, Any], team: str | None, days: float,
            path: Sequence[str] = TEAM_DELIVERED) -> float:
    """A team's GPU-hours at ``path`` per week of the measured span (0 for no team)."""
    if team is None:
        return 0.0
    per_week = WEEK_DAYS / (num(metrics, RUN_DAYS) or days)  # the span the simulator really measured
    teams = metrics.get("teams")
    entry = teams.get(team) if isinstance(teams, Mapping) else None
    return (num(entry, path) or 0.0) * per_week


def _run_weekly(metrics: Mapping[str, Any], path: Sequence[str], days: float) -> float:
    return (num(metrics, path) or 0.0) * WEEK_DAYS / (num(metrics, RUN_DAYS) or days)


def _entitlement_week(config: CompiledConfig, team: str | None, cluster: str) -> float:
    """The compiler's entitlement on ``cluster`` in that cluster's GPU-hours per week: the very
    ``entitlement_gpus`` that ``allot compile`` prints, times the hours of a week."""
    if team is None:
        return 0.0
    try:
        node = config.node(team)
    except KeyError:
        return 0.0
    return node.entitlement_gpus.get(cluster, 0.0) * WEEK_HOURS


def _ratio(delivered: float, owed: float) -> float | None:
    return delivered / owed if owed > 0 else None


def capacity(
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    days: float,
    changed: bool = False,
) -> Capacity | None:
    """The cluster's GPU-hours per week before and after (a capacity change, and what unallocated
    work absorbed of it); ``changed``: the PR changes the cluster's capacity."""
    if not pairs:
        return None

    def side(path: Sequence[str], i: int) -> list[float]:
        return [_run_weekly(p[i], path, days) for p in pairs]

    cap_b, cap_a = side(RUN_IN_SERVICE, 0), side(RUN_IN_SERVICE, 1)
    free_b, free_a = side(RUN_UNALLOCATED, 0), side(RUN_UNALLOCATED, 1)
    return Capacity(
        in_service_before=statistics.fmean(cap_b),
        in_service_after=statistics.fmean(cap_a),
        charged_before=statistics.fmean(side(RUN_CHARGED, 0)),
        charged_after=statistics.fmean(side(RUN_CHARGED, 1)),
        unallocated_before=statistics.fmean(free_b),
        unallocated_after=statistics.fmean(free_a),
        in_service_change=paired_interval([a - b for a, b in zip(cap_a, cap_b, strict=True)]),
        unallocated_change=paired_interval([a - b for a, b in zip(free_a, free_b, strict=True)]),
        changed=changed,
    )


def capacity_changed(base: CompiledConfig, head: CompiledConfig, cluster: str) -> bool:
    """Whether the PR changes ``cluster``'s GPUs or its maintenance windows."""
    b, h = base.clusters.get(cluster), head.clusters.get(cluster)
    if b is None or h is None:
        return b is not h
    return b.gpus != h.gpus or b.node_groups != h.node_groups or b.maintenance != h.maintenance


def _team_metric(metrics: Mapping[str, Any], team: str | None, path: Sequence[str]) -> float | None:
    teams = metrics.get("teams")
    if team is None or not isinstance(teams, Mapping):
        return None
    return num(teams.get(team), path)


def _team_names(runs: Sequence[RunLike], side: str) -> set[str]:
    out: set[str] = set()
    for r in runs:
        teams = r.metrics.get("teams")
        if r.side == side and isinstance(teams, Mapping):
            out.update(str(t) for t in teams)
    return out


def summarize(
    base: CompiledConfig,
    head: CompiledConfig,
    runs: Sequence[RunLike],
    *,
    workload: str,
    workload_key: str,
    days: float,
    seeds: tuple[int, ...],
    cluster: str,
    note: str = "",
    latency_profile: str = "none",
    warmup_days: float = 0.0,
    warmed_under_base: bool = False,
) -> Impact:
    # read from the base: a pull request cannot raise or silence its own warnings (plan/rules.py)
    threshold = base.policy_for(cluster).flag_delivered_drop
    renames = dict(diff_configs(base, head).renamed)
    back = {new: old for old, new in renames.items()}
    by_seed: dict[int, dict[str, Mapping[str, Any]]] = {}
    for r in runs:
        by_seed.setdefault(r.seed, {})[r.side] = r.metrics
    pairs = [(by_seed[s]["base"], by_seed[s]["head"]) for s in seeds if len(by_seed.get(s, {})) == 2]
    names = _team_names(runs, "head") | {renames.get(t, t) for t in _team_names(runs, "base")}
    teams = []
    p_values: dict[str, float] = {}
    base_names, head_names = _team_names(runs, "base"), _team_names(runs, "head")
    for team in sorted(names):
        old = back.get(team, team) if back.get(team, team) in base_names else None
        new = team if team in head_names else None
        before = [_weekly(b, old, days) for b, _ in pairs]
        after = [_weekly(h, new, days) for _, h in pairs]
        diffs = [a - b for a, b in zip(after, before, strict=True)]
        interval = paired_interval(diffs)
        mean_before = statistics.fmean(before) if before else 0.0
        mean_after = statistics.fmean(after) if after else 0.0
        owed_b = _mean([_weekly(b, old, days, TEAM_OWED) for b, _ in pairs]) or 0.0
        owed_a = _mean([_weekly(h, new, days, TEAM_OWED) for _, h in pairs]) or 0.0
        ent_b = _entitlement_week(base, old, cluster)
        ent_a = _entitlement_week(head, new, cluster)
        judgment = judge(mean_before, ent_b, ent_a, threshold)
        p = drop_p_value(mean_before, diffs, judgment.line)
        if flag(mean_before, interval, judgment.line):
            p_values[team] = p
        teams.append(
            TeamImpact(
                team=team,
                delivered_week_before=mean_before,
                delivered_week_after=mean_after,
                change=interval,
                ratio_before=_ratio(mean_before, owed_b) if old is not None else None,
                ratio_after=_ratio(mean_after, owed_a) if new is not None else None,
                p90_wait_before_s=_mean([_team_metric(b, old, TEAM_P90_WAIT) for b, _ in pairs]),
                p90_wait_after_s=_mean([_team_metric(h, new, TEAM_P90_WAIT) for _, h in pairs]),
                flagged=False,  # set below, once every team's test is known
                demand_week_before=_mean([_weekly(b, old, days, TEAM_DEMAND) for b, _ in pairs]) or 0.0,
                demand_week_after=_mean([_weekly(h, new, days, TEAM_DEMAND) for _, h in pairs]) or 0.0,
                owed_week_before=owed_b,
                owed_week_after=owed_a,
                entitlement_week_before=ent_b,
                entitlement_week_after=ent_a,
                p_value=p,
                judgment=judgment,
            )
        )
    # Holm over the teams the plan tested (a team that could not be flagged has p = 1 and still
    # counts in its family: the correction is for the number of teams looked at), within the
    # teams whose entitlement the change lowers and apart within the others (plan/holm.py)
    family = {t.team: t.p_value for t in teams if t.delivered_week_before > 0}
    cut = frozenset(t.team for t in teams if t.entitlement_cut)
    kept = holm_in_families(family, cut) & set(p_values)
    teams = [replace(t, flagged=t.team in kept) for t in teams]
    occ = [(num(b, RUN_OCCUPANCY), num(h, RUN_OCCUPANCY)) for b, h in pairs]
    occ_pairs = [(b, h) for b, h in occ if b is not None and h is not None]
    return Impact(
        workload=workload,
        workload_key=workload_key,
        cluster=cluster,
        days=days,
        seeds=seeds,
        teams=tuple(teams),
        occupancy_before=_mean([b for b, _ in occ_pairs]),
        occupancy_after=_mean([h for _, h in occ_pairs]),
        occupancy_change=paired_interval([h - b for b, h in occ_pairs]) if occ_pairs else None,
        flag_threshold=threshold,
        cached_runs=sum(1 for r in runs if r.cached),
        total_runs=len(runs),
        note=note,
        latency_profile=latency_profile,
        warmup_days=warmup_days,
        warmed_under_base=warmed_under_base,
        capacity=capacity(pairs, days, capacity_changed(base, head, cluster)),
        family_alpha=ALPHA,
        kind_waits=kind_waits(pairs),
    )


def kind_waits(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> tuple[KindWait, ...]:
    """Each job kind's p50 and p90 wait, mean over the seeds, base and head; a seed in which no
    job of the kind waited has no percentile and is left out (not read as 0 s)."""

    def mean(side: int, kind: str, q: str) -> float | None:
        return _mean([num(p[side], (RUN_WAIT, kind, q)) if (num(p[side], (RUN_WAIT, kind, "n")) or 0) > 0
                      else None for p in pairs])

    return tuple(
        KindWait(k, mean(0, k, "p50"), mean(1, k, "p50"), mean(0, k, "p90"), mean(1, k, "p90"))
        for k in JOB_KINDS
    )
