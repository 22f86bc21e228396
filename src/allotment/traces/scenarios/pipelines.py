"""Pipelines of dependent jobs (data prep -> train -> eval) added to a scenario's workload.

What the ``ai2-pipelines`` scenario adds to ``ai2`` (issue 28, item 2): each team also submits
pipelines, each a small graph of jobs joined by ``depends_on`` and submitted at once, as a
script with Slurm's ``--dependency=afterok`` does:

* **data prep** (fan-in): 1-3 jobs of 1-4 GPUs, minutes long (median 15 min, 2 min - 2 h).
  The Osprey write-up's example prerequisite is a data preprocessing job that ran "in 4 minutes";
* **train**: one run waiting for every prep job, sized like ``ai2``'s training runs (2-32 whole
  nodes by the same draw, at most the team's allocation), median 3 h (30 min - 24 h), resumable;
* **eval** (fan-out): 1-4 jobs of 1-8 GPUs waiting for the run, median 30 min (5 min - 4 h);
* **merge** (fan-in), in half of the pipelines: one 1-GPU job waiting for every eval, 5-20 min.

Declared priorities follow the write-up's example, where the training run (0.9) waited for a
lower-priority prep job (0.3): prep 0, train 1, eval 0, merge 0.  A third of the pipelines carry a
deadline on their last jobs (eval or merge), 1.5-3x the pipeline's critical path of work after
its submit: the write-up's urgency is minutes to a deadline, and a deadline only the last job
states is what the dependency pass must carry back to the prerequisites.

How much: pipelines arrive per team as a Poisson stream at a rate that offers
``Calibration.pipelines`` times the team's slice of GPU-hours (about 10% under ``ai2-pipelines``),
on top of ``ai2``'s own load.  The write-up gives no rates; the mix, sizes, shares and the
deadline fraction above are assumptions, chosen so pipelines are a visible but minor part of the
load (docs/scenarios.md).  Pipelines are not paced by ``ai2``'s closed-loop streams (a scripted
pipeline is submitted whole), so they add to the queue rather than replace what a team offers.

Deterministic: drawn from ``random.Random(f"{seed}/{team}/pipelines")`` only, so ``ai2``'s own
jobs in ``ai2-pipelines`` are exactly ``ai2``'s of the same seed.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from allotment.core.jobs import JobSpec

MINUTE = 60.0
HOUR = 3600.0
PREP_JOBS = (1, 2, 3)
EVAL_JOBS = (1, 2, 3, 4)
MERGE_SHARE = 0.5  # pipelines ending in a merge job
DEADLINE_SHARE = 1.0 / 3.0  # pipelines whose last jobs carry a deadline
DEADLINE_SLACK = (1.5, 3.0)  # deadline = submit + this x the critical path of work


@dataclass(frozen=True, slots=True)
class Team:
    """What the pipelines of one team need: its name, users, GPUs of its slice, node size, the
    most whole nodes a training run of it takes, and the tightest ``max_gpus`` on its path (its
    users size a job to a quarter of it at most, as ``ai2``'s ``_fit`` does)."""

    name: str
    users: Sequence[str]
    slice_gpus: float
    gpn: int
    max_nodes: int | None
    train_nodes: tuple[tuple[int, float], ...]
    cap: int | None = None


def _lognormal(rng: random.Random, median: float, sigma: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, median * math.exp(rng.gauss(0.0, sigma))))


def _nodes(rng: random.Random, team: Team) -> int:
    x = rng.random() * sum(w for _, w in team.train_nodes)
    n = team.train_nodes[-1][0]
    for value, w in team.train_nodes:
        x -= w
        if x < 0:
            n = value
            break
    if team.max_nodes is not None:
        n = min(n, team.max_nodes)
    if team.cap is not None:
        n = min(n, max(1, team.cap // 4 // team.gpn))
    return n


def pipeline(rng: random.Random, team: Team, number: int, submit: float) -> list[JobSpec]:
    """One pipeline of ``team`` submitted at ``submit``: its jobs, prerequisites first.

    Ids ``TEAM-pNNNNNN-1prepK``, ``-2train``, ``-3evalK``, ``-4merge`` sort in dependency order
    at one submit time (a trace lists jobs by (submit, id))."""
    user = rng.choice(list(team.users))
    base = f"{team.name}-p{number:06d}"
    top = team.gpn if team.cap is None else max(1, min(team.gpn, team.cap // 4))
    small = tuple(g for g in (1, 2, 4, 8) if g <= top) or (top,)

    def job(role: str, gpus: int, work: float, *, deps: tuple[str, ...] = (), kind: str = "batch",
            priority: int = 0, per_node: int | None = None, checkpoint: float | None = 900.0) -> JobSpec:
        return JobSpec(
            id=f"{base}-{role}", submit=round(submit, 3), account=team.name, gpus=gpus, work=round(work, 3),
            user=user, gpus_per_node=per_node, min_runtime=round(min(work, 30 * MINUTE), 3), resumable=True,
            checkpoint_interval=checkpoint, priority=priority, kind=kind, depends_on=deps,
        )

    preps = [job(f"1prep{k}", rng.choice(small[:3]), _lognormal(rng, 15 * MINUTE, 0.9, 2 * MINUTE, 2 * HOUR))
             for k in range(rng.choice(PREP_JOBS))]
    nodes = _nodes(rng, team)
    train = job("2train", nodes * team.gpn, _lognormal(rng, 3 * HOUR, 0.7, 30 * MINUTE, 24 * HOUR),
                deps=tuple(p.id for p in preps), kind="train", priority=1, per_node=team.gpn, checkpoint=HOUR)
    evals = [job(f"3eval{k}", rng.choice(small), _lognormal(rng, 30 * MINUTE, 0.8, 5 * MINUTE, 4 * HOUR),
                 deps=(train.id,)) for k in range(rng.choice(EVAL_JOBS))]
    merge = ([job("4merge", 1, rng.uniform(5 * MINUTE, 20 * MINUTE), deps=tuple(e.id for e in evals))]
             if rng.random() < MERGE_SHARE else [])
    if rng.random() < DEADLINE_SHARE:
        path = max(p.work for p in preps) + train.work + max(e.work for e in evals) + sum(m.work for m in merge)
        due = round(submit + rng.uniform(*DEADLINE_SLACK) * path, 3)
        if merge:
            merge = [_due(merge[0], due)]
        else:
            evals = [_due(e, due) for e in evals]
    return [*preps, train, *evals, *merge]


def _due(j: JobSpec, deadline: float) -> JobSpec:
    return dataclasses.replace(j, deadline=deadline)


def _gpu_seconds(jobs: Sequence[JobSpec]) -> float:
    return sum(j.gpus * j.work for j in jobs)


def pipelines(seed: int, team: Team, horizon: float, share: float) -> list[JobSpec]:
    """``team``'s pipelines over ``[0, horizon)``: a Poisson stream offering ``share`` x its
    slice's GPU-seconds (the mean size of a pipeline estimated from 2,000 draws of its own)."""
    if share <= 0:
        return []
    est = random.Random(f"{seed}/{team.name}/pipelines/size")
    mean = sum(_gpu_seconds(pipeline(est, team, 0, 0.0)) for _ in range(2000)) / 2000
    rate = share * team.slice_gpus / mean  # pipelines per second
    rng = random.Random(f"{seed}/{team.name}/pipelines")
    out: list[JobSpec] = []
    t, n = 0.0, 0
    while True:
        t += rng.expovariate(rate)
        if t >= horizon:
            return out
        out.extend(pipeline(rng, team, n, t))
        n += 1
