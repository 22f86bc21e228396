"""Within-team priority: which of one team's pending jobs goes first.

The score is a weighted sum of signals (weights from ``Policy.priority_weights``), highest first:

* declared: the user's own priority, raised to the highest priority of any job that depends on
  it (a job others wait for inherits their urgency, see ``propagate``);
* deadline urgency: 0 without a deadline, rising to 1 as the slack before the deadline runs out;
* age: time since the job became eligible, capped (``age_cap_s``) so age cannot override the rest;
* fairness among the team's users: a user with fewer GPUs running goes first;
* fit: 1 when the job fits the free capacity right now, so free GPUs do not idle behind a job
  that cannot start; its weight grows with load (adaptive weights: when demand is high, packing
  matters more than age);
* boosts: manual, expiring bumps from ``Policy.boosts``.

Ties break by eligibility time, then job id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from allotment.core.context import Context
from allotment.core.jobs import JobSpec


@dataclass(frozen=True, slots=True)
class PriorityScore:
    total: float
    declared: float
    deadline: float
    age: float
    fairness: float
    fit: float
    boost: float


def propagate(specs: Iterable[JobSpec]) -> dict[str, int]:
    """Effective declared priority: a job's own, or the highest of any job depending on it."""
    by_id = {s.id: s for s in specs}
    eff = {i: s.priority for i, s in by_id.items()}
    # relax along depends_on edges until stable (dependency chains are short; cycles stop too)
    for _ in range(len(by_id)):
        changed = False
        for s in by_id.values():
            for dep in s.depends_on:
                if dep in eff and eff[dep] < eff[s.id]:
                    eff[dep] = eff[s.id]
                    changed = True
        if not changed:
            break
    return eff


def boost_for(ctx: Context, spec: JobSpec, now: float) -> float:
    total = 0.0
    for b in ctx.policy.boosts:
        kind, _, name = b.target.partition(":")
        hit = (
            (kind == "job" and name == spec.id)
            or (kind == "user" and name == spec.user)
            or (kind == "account" and name == spec.account)
        )
        if hit and now < ctx.boost_expiry_s(b.expires):
            total += b.amount
    return total


def score(
    ctx: Context,
    spec: JobSpec,
    *,
    declared: int,
    now: float,
    eligible: float,
    remaining: float,
    fits: bool,
    user_running_gpus: int,
    load: float,
) -> PriorityScore:
    """The within-team score of one pending job (higher goes first), with its parts."""
    parts = score_parts(ctx, spec, declared=declared, now=now, eligible=eligible, remaining=remaining,
                        fits=fits, user_running_gpus=user_running_gpus, load=load)
    return PriorityScore(sum(parts), *parts)


def score_parts(
    ctx: Context,
    spec: JobSpec,
    *,
    declared: int,
    now: float,
    eligible: float,
    remaining: float,
    fits: bool,
    user_running_gpus: int,
    load: float,
) -> tuple[float, float, float, float, float, float]:
    """(declared, deadline, age, fairness, fit, boost), each already weighted."""
    w = ctx.policy.priority_weights
    urgency = 0.0
    if spec.deadline is not None:
        slack = spec.deadline - now - remaining
        urgency = 1.0 if slack <= 0 else 1.0 / (1.0 + slack / 3600.0)
    age = min(max(0.0, now - eligible), float(w.age_cap_s)) / max(1.0, float(w.age_cap_s))
    fairness = 1.0 / (1.0 + user_running_gpus / 8.0)
    fit_w = w.fit * min(3.0, max(1.0, load))
    boost = boost_for(ctx, spec, now) if ctx.policy.boosts else 0.0
    return (
        w.declared * declared,
        w.deadline * urgency,
        w.age * age,
        w.fairness * fairness,
        fit_w * (1.0 if fits else 0.0),
        boost,
    )
