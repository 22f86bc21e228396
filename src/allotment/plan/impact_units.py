"""What one worker process simulates with one workload, and in which order the work is handed out.

Common random numbers make both sides of a seed replay the very same workload, and generating
it is not free: about 1.25 s CPU against about 10 s for one 5-day simulation of the bundled
example (docs/benchmarks.md).  Generating it once per side, as each run did alone, spent a tenth
of a cold plan on copies.  Both sides also share the warm-up: it is simulated once, under the
base, and the head switched in after it (``sim/switch.py``; docs/plan.md, "What is
simulated"), so a unit of both sides simulates three lookback windows, not four.  Shipping a
generated workload to the other worker would cost almost as much (0.9 MB pickled, 0.2 s to
pickle and unpickle).  So the runs of one seed travel together as
a :class:`Unit`: one worker generates the workload once and replays it under each side.

Grouping is a strategy (``Grouping``) with a plain reference, :func:`one_per_run` (every run
alone, generating its own workload: the old way), that tests/plan/test_impact_units.py proves
gives the same metrics.  :func:`by_seed` is the default.  It splits a seed into single runs only
where that shortens the plan, as :func:`makespan` models the executor: the local pool runs every
unit at once, its cores shared (``executors.local``), so the default plan's five pairs on two
cores end together and no seed is split (until stop 41 the pool ran two processes, and seed 5
was split into two singles, each simulating the workload and the warm-up again: 7% more CPU);
a Slurm array runs every unit on its own core, so there every seed is split.  Units are handed
out longest first (longest-processing-time list scheduling) for when they do not all fit.

Where the executor has more than one core, a pair's head side runs in a child forked from the
paused warm-up (``Unit.fork``, ``plan.forked``; since stop 49), next to its base side, instead
of in a deep copy of the paused run after it.  :func:`makespan` still models a pair as one
process: the fork takes the copy's CPU off and lets the pair's two measured parts run on both
cores, so the pool's last minutes no longer leave a core idle while one process finishes both
sides of its seed; which seeds to split is decided as before (on two cores: none).

Every run is deterministic, so neither the grouping nor the order can change a result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.core.jobs import JobSpec
from allotment.plan import forked
from allotment.plan.executors.local import processes
from allotment.sim.latency import NONE, LatencyProfile
from allotment.traces.scenarios import Workload, get_scenario


@dataclass(frozen=True, slots=True)
class Setup:
    """What every run of one plan shares: both configs and the workload recipe."""

    base: CompiledConfig
    head: CompiledConfig
    renames: tuple[tuple[str, str], ...]
    cluster: str
    days: float
    scenario: str
    trace: Path | None
    latency: LatencyProfile = NONE  # the backend's delays (sim/latency.py), both sides alike
    warmup_days: float = 0.0  # simulated before ``days`` and left out of the metrics (sim/window.py)
    switch: bool = False  # the head switched in after the base's warm-up (sim/switch.py)

    @property
    def horizon_days(self) -> float:
        """What each run simulates: the warm-up, then the measured days."""
        return self.warmup_days + self.days


@dataclass(frozen=True, slots=True)
class Task:
    """One side to simulate on one seed's workload; ``key`` names its cache entry."""

    side: str  # "base" or "head"
    seed: int
    key: str


@dataclass(frozen=True, slots=True)
class Unit:
    """Runs of one seed done by one worker on one generated workload, in order."""

    setup: Setup
    seed: int
    tasks: tuple[Task, ...]
    # the head side in a forked child from the paused warm-up, next to the base (``plan.forked``):
    # where the executor has more than one core (``units``), never under ``--workers 1``
    fork: bool = False


Grouping = Callable[[Sequence[Task], int], list[tuple[Task, ...]]]


def one_per_run(tasks: Sequence[Task], workers: int) -> list[tuple[Task, ...]]:
    """Reference grouping: every run alone, in the order given."""
    return [(t,) for t in tasks]


def by_seed(tasks: Sequence[Task], workers: int) -> list[tuple[Task, ...]]:
    """The runs of a seed together, except for the fewest seeds that must be split into single
    runs for the plan to end soonest on ``workers`` cores (:func:`makespan`); longest units
    first, then by seed."""
    seeds: dict[int, list[Task]] = {}
    for t in tasks:
        seeds.setdefault(t.seed, []).append(t)
    order = {seed: i for i, seed in enumerate(seeds)}
    groups = [tuple(ts) for ts in seeds.values()]
    multi = [i for i, g in enumerate(groups) if len(g) > 1]
    best: list[tuple[Task, ...]] = []
    best_span = Fraction(-1)
    for k in range(len(multi) + 1):  # split the last k seeds with more than one run
        split = set(multi[len(multi) - k :])
        cand = [u for i, g in enumerate(groups) for u in ([(t,) for t in g] if i in split else [g])]
        cand.sort(key=lambda g: (-_cost(g), order[g[0].seed], g[0].side))
        span = makespan(cand, workers)
        if best_span < 0 or span < best_span:
            best, best_span = cand, span
    return best


# Relative costs: generating a seed's workload against simulating one lookback window (the
# warm-up, or the default measured days), about 1 to 6 on the bundled example (docs/benchmarks.md).
# A unit simulates the base's warm-up once and then each of its sides' measured days
# (sim/switch.py: the head is switched in after the base's warm-up).
SEGMENT_COST, GEN_COST = 6, 1


def _cost(group: tuple[Task, ...]) -> int:
    return GEN_COST + SEGMENT_COST * (1 + len(group))


def makespan(groups: Sequence[tuple[Task, ...]], workers: int) -> Fraction:
    """Estimated time until the last of ``groups`` ends, handed out in order to the processes
    the executor runs at once (``executors.local.processes``), which share ``workers`` cores
    evenly (what the operating system does): each running unit advances at
    ``min(1, workers / running)`` of a core.  One worker runs them one after the other."""
    costs = [_cost(g) for g in groups]
    size = processes(len(costs), workers) if workers > 1 else 1
    running = [Fraction(c) for c in costs[:size]]
    waiting = costs[size:]
    t = Fraction(0)
    while running:
        rate = min(Fraction(1), Fraction(workers, len(running)))
        step = min(running)  # of work: the first to end
        t += step / rate
        running = [r - step for r in running if r != step]
        free = size - len(running)
        running += [Fraction(c) for c in waiting[:free]]
        waiting = waiting[free:]
    return t


def units(setup: Setup, tasks: Sequence[Task], workers: int, grouping: Grouping) -> list[Unit]:
    return [Unit(setup, g[0].seed, g, fork=workers > 1) for g in grouping(tasks, workers)]


def run_unit(u: Unit) -> tuple[dict[str, Any], ...]:
    """Generate (or read) the seed's workload once and simulate each task's side on it over the
    warm-up and the measured days; the metrics are the measured part's (``sim.window``),
    JSON-normalized (module level: a worker process runs it).

    With ``Setup.switch`` the warm-up is simulated once, under the base, and the head is
    switched in where the measured part starts (``sim.switch``; docs/plan.md, "What is
    simulated"): the base side runs on from the paused run, the head from the paused run itself
    in a forked child (``Unit.fork``: ``plan.forked``) or else from a copy of it.

    All of it in bulk (``config.bulk``): the cyclic collector, left on, rescanned the generated
    workload and the run's records again and again while the workload was drawn and the run
    built (about 0.2 s of their 0.65 s CPU a seed, docs/benchmarks.md, "Stop 49"); the
    simulated parts were in bulk already."""
    with bulk_allocation():
        return _run_unit(u)


def _run_unit(u: Unit) -> tuple[dict[str, Any], ...]:
    from allotment.sim import switch

    s = u.setup
    w = workload(s, u.seed)
    warmup_s = s.warmup_days * 86400.0
    sims: dict[str, Any] = {}
    children: dict[str, forked.Child[dict[str, Any]]] = {}
    shared = None  # the base's warm-up, paused where the measured part starts
    for t in u.tasks:
        if s.switch or t.side == "base":
            if shared is None:
                shared = switch.start(s.base, for_side(w, s.base, {}), cluster=s.cluster,
                                      days=s.horizon_days, seed=u.seed, latency=s.latency)
                switch.pause(shared, warmup_s)
            if t.side == "base":
                sims[t.side] = shared
            elif len(u.tasks) == 1:
                switch.switch(shared, s.head)
                sims[t.side] = shared
            elif u.fork and forked.can_fork():  # the base side runs on from ``shared`` here
                children[t.side] = forked.start(partial(_switched_metrics, shared, s.head, warmup_s))
            else:
                sims[t.side] = switch.switched(shared, s.head)
        else:  # not switchable (sim.switch.switch_refusal): the head warms up alone
            sims[t.side] = switch.start(s.head, for_side(w, s.head, dict(s.renames)), cluster=s.cluster,
                                        days=s.horizon_days, seed=u.seed, latency=s.latency)
    try:
        out = {side: _metrics(sim, warmup_s) for side, sim in sims.items()}
    except BaseException:
        for child in children.values():  # no orphan simulating on for nobody
            child.abandon()
        raise
    out.update((side, child.result()) for side, child in children.items())
    return tuple(out[t.side] for t in u.tasks)


def _switched_metrics(sim: Any, head: CompiledConfig, warmup_s: float) -> dict[str, Any]:
    """The head side's metrics from the paused ``sim``, switched in place: run in a forked child,
    whose copy of the paused run nobody else needs."""
    from allotment.sim import switch

    switch.switch(sim, head)
    return _metrics(sim, warmup_s)


def _metrics(sim: Any, warmup_s: float) -> dict[str, Any]:
    """Run ``sim`` to its horizon; its measured part's metrics, JSON-normalized."""
    from allotment.sim import switch
    from allotment.sim.window import measured

    switch.finish(sim)
    normalized: dict[str, Any] = json.loads(json.dumps(measured(sim.rec, warmup_s), sort_keys=True))
    return normalized


def for_side(w: Workload, config: CompiledConfig, renames: Mapping[str, str]) -> Workload:
    """The jobs ``config`` can run: accounts renamed, unknown accounts left out."""
    leaves = {n.name for n in config.leaves()}
    jobs: list[JobSpec] = []
    for j in w.jobs:
        account = renames.get(j.account, j.account)
        if account in leaves:
            jobs.append(j if account == j.account else replace(j, account=account))
    return Workload(tuple(jobs), w.node_events)


def workload(s: Setup, seed: int) -> Workload:
    """The workload both sides of ``seed`` replay: the trace, or the scenario's."""
    if s.trace is not None:
        from allotment.traces.canonical import read_trace

        tr = read_trace(s.trace)
        return Workload.of(tr.jobs, tr.node_events)
    return generate(s.scenario, s.base, s.head, s.renames, s.cluster, s.horizon_days, seed)


def generate(
    scenario: str,
    base: CompiledConfig,
    head: CompiledConfig,
    renames: tuple[tuple[str, str], ...],
    cluster: str,
    days: float,
    seed: int,
) -> Workload:
    """The scenario's workload for ``base``, plus the jobs of teams new in ``head``.

    Demand is a property of the teams, not of the shares under test: every team's work is drawn
    from the base revision alone (its sizes from the base's slices), and both sides replay those
    very jobs, so a share change meets the same demand on both sides.  Only a team that exists in
    ``head`` alone brings work drawn from ``head`` (it has no base to draw from); its random
    stream is its own (``seed/team``), so the other teams' jobs are untouched by it."""
    gen = get_scenario(scenario)
    w: Workload = gen(base, cluster=cluster, days=days, seed=seed)
    new_teams = {n.name for n in head.leaves()} - {n.name for n in base.leaves()}
    new_teams -= {new for _, new in renames}
    if new_teams and cluster in head.clusters:
        extra: Workload = gen(head, cluster=cluster, days=days, seed=seed)
        w = Workload.of(
            w.jobs + tuple(j for j in extra.jobs if j.account in new_teams), w.node_events
        )
    return w
