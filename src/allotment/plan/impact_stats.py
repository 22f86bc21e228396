"""From per-seed simulation metrics to what the comment says: per team, the mean delivered
GPU-hours per week on each side and the 90% interval of the paired difference.

The one rule of the check lives in :func:`flag`: a team is flagged only when the interval
excludes zero (the drop is not the workload's noise) **and** the drop exceeds the policy's
``flag_delivered_drop`` of what the team got before (it matters), both at 90% confidence.

The simulator's metric names are read here and nowhere else (``TEAM_DELIVERED`` and friends),
defensively: a missing key reads as "not reported", never as a crash.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from allotment.compile.model import CompiledConfig
from allotment.plan.diff import diff_configs
from allotment.plan.model import Impact, TeamImpact
from allotment.plan.stats import Interval, paired_interval

WEEK_DAYS = 7.0
# metric paths in ``SimResult.metrics`` (see allotment.sim.metrics)
TEAM_DELIVERED = ("received_gpu_hours",)  # GPU-hours the team's budgeted work ran (uncapped: "delivered" is capped hour by hour at what it is owed)
TEAM_RATIO = ("ratio",)
TEAM_P90_WAIT = ("wait", "p90")
RUN_DAYS = ("days",)
RUN_OCCUPANCY = ("occupancy",)


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


def flag(before_mean: float, interval: Interval, threshold: float) -> bool:
    """The check's rule: the whole interval lies below ``-threshold x before``.  That implies
    both conditions of the rule (the interval excludes zero, and the drop exceeds the
    threshold) and asks the second with the same confidence as the first, so a team whose
    mean drop only grazes the threshold is not flagged on one seed list and cleared on the next.
    """
    return (
        before_mean > 0
        and interval.excludes_zero
        and interval.high < -threshold * before_mean
    )


def _mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.fmean(vals) if vals else None


def _weekly_delivered(metrics: Mapping[str, Any], team: str | None, days: float) -> float:
    if team is None:
        return 0.0
    per_week = WEEK_DAYS / (num(metrics, RUN_DAYS) or days)  # the span the simulator really ran
    teams = metrics.get("teams")
    entry = teams.get(team) if isinstance(teams, Mapping) else None
    return (num(entry, TEAM_DELIVERED) or 0.0) * per_week


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
    for team in sorted(names):
        old = back.get(team, team) if back.get(team, team) in _team_names(runs, "base") else None
        new = team if team in _team_names(runs, "head") else None
        before = [_weekly_delivered(b, old, days) for b, _ in pairs]
        after = [_weekly_delivered(h, new, days) for _, h in pairs]
        interval = paired_interval([a - b for a, b in zip(after, before, strict=True)])
        mean_before = statistics.fmean(before) if before else 0.0
        teams.append(
            TeamImpact(
                team=team,
                delivered_week_before=mean_before,
                delivered_week_after=statistics.fmean(after) if after else 0.0,
                change=interval,
                ratio_before=_mean([_team_metric(b, old, TEAM_RATIO) for b, _ in pairs]),
                ratio_after=_mean([_team_metric(h, new, TEAM_RATIO) for _, h in pairs]),
                p90_wait_before_s=_mean([_team_metric(b, old, TEAM_P90_WAIT) for b, _ in pairs]),
                p90_wait_after_s=_mean([_team_metric(h, new, TEAM_P90_WAIT) for _, h in pairs]),
                flagged=flag(mean_before, interval, threshold),
            )
        )
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
    )
