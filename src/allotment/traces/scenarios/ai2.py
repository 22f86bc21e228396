"""The ``ai2`` scenario: the setting of Ai2's post on moving a shared GPU cluster to budgets.

What it reproduces, and why each knob is set the way it is:

* the teams are the active leaves of the compiled tree eligible on ``cluster`` and each team's
  users come from the compiled users (topped up with synthetic names to about ten per team, so the
  bundled example gives about 150 users);
* demand is 2-3x capacity *all the time*.  An open stream of arrivals cannot do that: at a load
  near 1 the queue is a random walk that empties or grows without bound (an earlier version of
  this scenario drifted from 1x to 7x within two weeks).  People are a closed loop: a researcher
  keeps a few experiments in flight and submits the next when one ends.  So each team's jobs of
  one class form streams where a job depends on (``depends_on``) the one ``k`` places before it,
  ``k`` sized so the team keeps about ``Calibration.outstanding`` times its slice of the cluster
  in flight.
  The trace stays a plain file (replays are identical) yet reacts to the scheduler, and the
  arrivals offer ``Calibration.load`` (1.1x capacity under ``AI2``) so the streams stay full
  outside quiet spells;
* team demand is bursty: each team alternates busy and quiet spells (exponential, mean 1.5 days)
  with arrival rates well above and well below its share;
* the job mix (``calibration.py``: how much of each class, how much in flight, how large a
  training run may be, and why) has debug jobs (1-8 GPUs, minimum runtime at most 15 min) as
  the most numerous class, multi-node training (2-32 whole nodes by the draw, no more than the
  team's allocation under ``AI2``; hours to days, resumable, checkpointing) as the most
  GPU-hours, interactive sessions (not resumable), batch work, and unallocated work (minimum
  runtime 0);
* a few node failures a week, each repaired 6-48 h later.

Deterministic: everything is drawn from ``random.Random(seed)``.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from allotment.compile.model import BudgetNode, CompiledConfig
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.errors import UsageError
from allotment.traces.scenarios import pipelines
from allotment.traces.scenarios.calibration import AI2, BIG_GANGS, Calibration
from allotment.traces.scenarios.workload import Workload

DAY = 86400.0
HOUR = 3600.0

#: nodes per training job and their weights (256 GPUs on an 8-GPU node cluster is 32 nodes)
TRAIN_NODES: tuple[tuple[int, float], ...] = (
    (2, 0.40),
    (4, 0.30),
    (8, 0.20),
    (16, 0.08),
    (32, 0.02),
)
BACKLOG = 2.2  # GPUs requested by the initial backlog (long jobs, no debug) / capacity
BUSY_MULT, QUIET_MULT = 1.5, 0.5  # arrival-rate multipliers of a team's busy and quiet spells
SPELL_MEAN_S = 1.5 * DAY
FAILURES_PER_WEEK = 3.0
USERS_PER_TEAM = 10


class _Shape(NamedTuple):
    """One drawn job's size and contract (a named tuple: drawn tens of thousands of times a
    run, where a frozen dataclass's interpreted ``__init__`` cost 2 us each)."""

    gpus: int
    gpus_per_node: int | None
    work: float
    min_runtime: float
    resumable: bool
    checkpoint_interval: float | None
    kind: str
    priority: int


def _lognormal(rng: random.Random, median: float, sigma: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, median * math.exp(rng.gauss(0.0, sigma))))


def _choice(rng: random.Random, weighted: tuple[tuple[int, float], ...]) -> int:
    x = rng.random() * sum((w for _, w in weighted), 0.0)
    for value, w in weighted:
        x -= w
        if x < 0:
            return value
    return weighted[-1][0]


def _shape(rng: random.Random, cls: str, gpn: int, max_nodes: int | None = None) -> _Shape:
    """Sample one job of class ``cls`` on nodes of ``gpn`` GPUs (a training run on at most
    ``max_nodes`` nodes)."""
    small = (1, 1, 2, 4, 8) if gpn >= 8 else (1, 1, 2, gpn)
    if cls == "debug":
        work = rng.uniform(120.0, 1800.0)
        mr = min(work, float(rng.choice((300, 600, 900))))
        return _Shape(min(rng.choice(small), gpn), None, work, mr, False, None, "debug", 2)
    if cls == "batch":
        work = _lognormal(rng, 1.5 * HOUR, 0.8, 600.0, DAY)
        mr = float(rng.choice((1800, 3600)))
        return _Shape(
            min(rng.choice(small), gpn), None, work, min(mr, work), True, 1800.0, "batch", 0
        )
    if cls == "interactive":
        work = rng.uniform(HOUR, 8 * HOUR)
        return _Shape(
            min(rng.choice(small), gpn),
            None,
            work,
            min(work, 4 * HOUR),
            False,
            None,
            "interactive",
            1,
        )
    if cls == "unallocated":
        work = _lognormal(rng, 2 * HOUR, 0.7, 600.0, DAY)
        kind = "inference" if rng.random() < 0.3 else "batch"
        return _Shape(min(rng.choice(small), gpn), None, work, 0.0, True, 900.0, kind, 0)
    nodes = _choice(rng, TRAIN_NODES)
    if max_nodes is not None:
        nodes = min(nodes, max_nodes)
    work = _lognormal(rng, 6 * HOUR, 0.6, 2 * HOUR, 2 * DAY)
    mr = float(rng.choice((2 * 3600, 4 * 3600, 8 * 3600)))
    return _Shape(nodes * gpn, gpn, work, min(mr, work), True, 3600.0, "train", 0)


#: ``_mean_gpu_seconds(gpn, mix)`` of the bundled calibrations' two mixes on 8-GPU nodes, as it
#: computes them: its 100,000 draws were 0.1 s of every generated run's CPU compiled, 0.19 s
#: interpreted (1-2% of a 30-day ``simulate``; stop 48, docs/benchmarks.md), the same figure each
#: time.  Read first by ``mean_gpu_seconds``; tests/sim/test_scenario_ai2.py computes each again
#: and compares exactly.
KNOWN_MEANS: Mapping[tuple[int, tuple[tuple[str, float], ...]], float] = MappingProxyType({
    (8, AI2.mix): 46002.67771130269,
    (8, BIG_GANGS.mix): 53516.455403530024,
})  # fmt: skip


def mean_gpu_seconds(gpn: int, mix: tuple[tuple[str, float], ...]) -> float:
    """Expected GPU-seconds of one job of the mix: ``_mean_gpu_seconds``'s figure, known or computed."""
    known = KNOWN_MEANS.get((gpn, mix))
    return _mean_gpu_seconds(gpn, mix) if known is None else known


@functools.lru_cache(maxsize=8)
def _mean_gpu_seconds(gpn: int, mix: tuple[tuple[str, float], ...]) -> float:
    """Expected GPU-seconds of one job of the mix (fixed-seed estimate, independent of ``seed``):
    the definition ``KNOWN_MEANS`` holds the figures of."""
    rng = random.Random(20240601)
    total = 0.0
    n = 100_000
    for _ in range(n):
        s = _shape(rng, _pick_class(rng, mix), gpn)
        total += s.gpus * s.work
    return total / n


def _pick_class(rng: random.Random, mix: tuple[tuple[str, float], ...]) -> str:
    x = rng.random()
    for cls, p in mix:
        x -= p
        if x < 0:
            return cls
    return mix[-1][0]


def _teams(config: CompiledConfig, cluster: str) -> list[BudgetNode]:
    teams = [
        n
        for n in config.leaves()
        if n.active and n.entitlement_gpus.get(cluster, 0.0) > 0 and cluster in n.clusters
    ]
    if not teams:
        raise UsageError(f"cluster {cluster!r} has no funded team to generate work for")
    return sorted(teams, key=lambda n: n.name)


def _users(config: CompiledConfig, team: BudgetNode) -> list[str]:
    names = {u.name for u in config.users.values() if team.name in u.accounts} | set(team.members)
    users = sorted(names)
    i = 0
    while len(users) < USERS_PER_TEAM:
        candidate = f"{team.name}-user{i}"
        if candidate not in names:
            users.append(candidate)
        i += 1
    return users


def _spells(rng: random.Random, horizon: float) -> list[tuple[float, float, float]]:
    """Busy/quiet spells ``(start, end, multiplier)`` covering [0, horizon), rescaled so the
    time-weighted mean multiplier is exactly 1: bursts move a team's demand in time, they do not
    change how much it offers overall."""
    out = []
    t = 0.0
    busy = rng.random() < 0.5
    while t < horizon:
        end = min(horizon, t + rng.expovariate(1.0 / SPELL_MEAN_S))
        out.append((t, end, BUSY_MULT if busy else QUIET_MULT))
        t, busy = end, not busy
    mean = sum(((e - s) * m for s, e, m in out), 0.0) / horizon
    return [(s, e, m / mean) for s, e, m in out]


def generate(
    config: CompiledConfig,
    *,
    cluster: str,
    days: float,
    seed: int,
    calibration: Calibration = AI2,
) -> Workload:
    """Generate ``days`` of the Ai2 setting on ``cluster`` of ``config`` (see the module doc)."""
    if cluster not in config.clusters:
        raise UsageError(
            f"unknown cluster {cluster!r}; known: {', '.join(sorted(config.clusters))}"
        )
    if not days > 0:
        raise UsageError(f"--days must be positive, got {days}")
    cl = config.clusters[cluster]
    gpn = max(g.gpus_per_node for g in cl.node_groups)
    capacity = cl.gpus
    horizon = days * DAY
    rng = random.Random(seed)
    teams = _teams(config, cluster)
    total_abs = sum((t.absolute.get(cluster, 0.0) for t in teams), 0.0)
    mix = calibration.mix
    mean_gs = mean_gpu_seconds(gpn, mix)
    jobs: list[JobSpec] = []
    for team in teams:
        trng = random.Random(f"{seed}/{team.name}")
        users = _users(config, team)
        weight = team.absolute.get(cluster, 0.0) / total_abs
        # initial backlog: GPUs requested ~ BACKLOG x this team's slice of the cluster
        want = BACKLOG * capacity * weight
        cap = _cap(config, team)
        max_nodes = _max_nodes(config, team, cluster, gpn) if calibration.runs_fit_allocation else None
        backlog: list[_Draft] = []
        got = 0
        while got < want:
            cls = _pick_class(trng, mix)
            if cls == "debug":
                continue
            s = _fit(_shape(trng, cls, gpn, max_nodes), cap, gpn)
            backlog.append(_Draft(cls, round(trng.uniform(0.0, 600.0), 3), trng.choice(users), s))
            got += s.gpus
        load = calibration.load
        rate = load * capacity * weight / mean_gs  # jobs per second at multiplier 1
        target = load * capacity * weight * horizon  # GPU-seconds this team offers after t=0
        spells = _spells(trng, horizon)
        arrivals: list[_Draft] = []
        offered = 0.0
        # heavy-tailed job sizes must not make the realized load drift away from the load by
        # chance: sweep the same bursty spells again, at the rate of what is still missing,
        # until the team has offered its target, then thin at random if it overshot
        scale = 1.0
        while offered < 0.99 * target and scale > 0.005:
            for start, end, mult in spells:
                t = start
                while True:
                    t += trng.expovariate(rate * mult * scale)
                    if t >= end:
                        break
                    cls = _pick_class(trng, mix)
                    s = _fit(_shape(trng, cls, gpn, max_nodes), cap, gpn)
                    arrivals.append(_Draft(cls, round(t, 3), trng.choice(users), s))
                    offered += s.gpus * s.work
            scale = max(0.0, (target - offered) / target)
        while offered > 1.01 * target and arrivals:
            gone = arrivals.pop(trng.randrange(len(arrivals))).shape
            offered -= gone.gpus * round(gone.work, 3)
        arrivals.sort(key=lambda a: a.submit)
        streams = _Streams(calibration.outstanding, capacity * weight, gpn, max_nodes)
        jobs.extend(_chain(team.name, backlog + arrivals, streams))
        if calibration.pipelines > 0:
            who = pipelines.Team(team.name, users, capacity * weight, gpn, max_nodes, TRAIN_NODES, cap)
            jobs.extend(pipelines.pipelines(seed, who, horizon, calibration.pipelines))
    events = _failures(rng, cl.node_names, horizon)
    return Workload.of(jobs, events)


def _max_nodes(config: CompiledConfig, team: BudgetNode, cluster: str, gpn: int) -> int:
    """The most whole nodes a training run of ``team`` takes: its allocation, at least one node
    (``Calibration.runs_fit_allocation``).  The allocation is its share's GPUs (``absolute``), not
    the ``max_gpus``-capped entitlement: a capped team's users size their runs by ``_fit``."""
    gpus = team.absolute.get(cluster, 0.0) * config.clusters[cluster].gpus
    return max(1, int(gpus // gpn))


def _mean_gpus(cls: str, gpn: int, max_nodes: int | None) -> float:
    """Expected GPUs of one job of class ``cls`` on nodes of ``gpn`` GPUs (before max_gpus caps)."""
    if cls == "train":
        top = max_nodes if max_nodes is not None else max(n for n, _ in TRAIN_NODES)
        used = sum((min(n, top) * w for n, w in TRAIN_NODES), 0.0)
        return gpn * used / sum((w for _, w in TRAIN_NODES), 0.0)
    small = (1, 1, 2, 4, 8) if gpn >= 8 else (1, 1, 2, gpn)
    return sum(min(g, gpn) for g in small) / len(small)


@dataclass(frozen=True, slots=True)
class _Streams:
    """What sizes one team's streams of experiments in flight (``_chain``)."""

    outstanding: Mapping[str, float]
    slice_gpus: float
    gpn: int
    max_nodes: int | None


def _chain(team: str, drafts: list[_Draft], st: _Streams) -> list[JobSpec]:
    """Researchers keep a bounded number of experiments of each class in flight: the next one
    goes in when an earlier one ends.  Encoded in the trace as ``depends_on`` the job ``k``
    places back in the same team and class, so the replay reacts to the scheduler the way people
    do and demand stays near ``sum(outstanding)`` times the team's slice instead of drifting.

    Each job is built here once, numbered in submit order, with its dependency: the drafts carry
    what was drawn, so no job is built and then copied to change its id or ``depends_on``."""
    in_flight = {
        cls: max(1, round(share * st.slice_gpus / _mean_gpus(cls, st.gpn, st.max_nodes)))
        for cls, share in st.outstanding.items()
    }
    streams: dict[str, list[str]] = {}
    out: list[JobSpec] = []
    for i, d in enumerate(drafts):
        job_id = f"{team}-{i:06d}"
        depends_on: tuple[str, ...] = ()
        k = in_flight.get(d.cls)
        if k is not None:
            ids = streams.setdefault(d.cls, [])
            if len(ids) >= k:
                depends_on = (ids[-k],)
            ids.append(job_id)
        out.append(_job(team, job_id, d, depends_on))
    return out


def _cap(config: CompiledConfig, team: BudgetNode) -> int | None:
    """The tightest max_gpus on the team's path: its users know not to submit larger jobs."""
    caps = []
    name: str | None = team.name
    while name is not None:
        node = config.node(name)
        if node.max_gpus is not None:
            caps.append(node.max_gpus)
        name = node.parent
    return min(caps) if caps else None


def _fit(s: _Shape, cap: int | None, gpn: int) -> _Shape:
    """Users of a capped team size their jobs so several run side by side under the cap."""
    if cap is None or s.gpus <= cap // 4:
        return s
    cap = max(1, cap // 4)
    if s.gpus_per_node is not None:
        nodes = max(1, cap // gpn)
        return _Shape(
            nodes * gpn,
            gpn,
            s.work,
            s.min_runtime,
            s.resumable,
            s.checkpoint_interval,
            s.kind,
            s.priority,
        )
    return _Shape(
        max(1, cap),
        None,
        s.work,
        s.min_runtime,
        s.resumable,
        s.checkpoint_interval,
        s.kind,
        s.priority,
    )


class _Draft(NamedTuple):
    """A job as drawn, before it is numbered and chained (``_chain``); ``submit`` is rounded to
    the trace's millisecond already, since the team's jobs are numbered in that order."""

    cls: str
    submit: float
    user: str
    shape: _Shape


def _job(team: str, job_id: str, d: _Draft, depends_on: tuple[str, ...]) -> JobSpec:
    s = d.shape
    return JobSpec(
        id=job_id,
        submit=d.submit,
        account=team,
        gpus=s.gpus,
        work=round(s.work, 3),
        user=d.user,
        gpus_per_node=s.gpus_per_node,
        min_runtime=round(s.min_runtime, 3),
        resumable=s.resumable,
        checkpoint_interval=s.checkpoint_interval,
        priority=s.priority,
        kind=s.kind,
        depends_on=depends_on,
    )


def _failures(rng: random.Random, nodes: tuple[str, ...], horizon: float) -> list[NodeEvent]:
    """A few node failures a week; a failed node is repaired 6-48 h later."""
    events: list[NodeEvent] = []
    busy_until: dict[str, float] = {}
    t = 0.0
    rate = FAILURES_PER_WEEK / (7 * DAY)
    while True:
        t += rng.expovariate(rate)
        if t >= horizon:
            break
        node = rng.choice(nodes)
        if busy_until.get(node, -1.0) > t:
            continue
        back = t + rng.uniform(6 * HOUR, 48 * HOUR)
        busy_until[node] = back
        events.append(NodeEvent(round(t, 3), node, "unhealthy"))
        events.append(NodeEvent(round(back, 3), node, "healthy"))
    return events
