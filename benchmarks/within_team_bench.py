"""Deriving the within-team order (issue 28, item 5): 10,000 pending jobs of 15 teams with a
2,000-edge same-team dependency graph, per ``within_team.mode``, by the plain reference and by
the fast path, side by side.

Usage: ALLOTMENT_PURE=1 PYTHONPATH=src python benchmarks/within_team_bench.py [--repeat 7]

One derivation is what a tick pays for the order of every team's queue from scratch: the
dependency pass (each job's same-team dependants and its propagated declared priority), each
pending record's declared priority set from it, one ``Scorer`` and the ranking of each team's
pending jobs.  ``reference``: ``dependants`` + ``propagate_by_relaxing`` and
``Scorer.ranked_by_key`` (one ``total`` per job); ``fast``: ``dependency_pass`` and
``Scorer.ranked``, which scores a long queue over arrays (``core.within_team_arrays``), with
``merged`` (``adaptive`` and ``fifo`` read what a prerequisite inherits from its dependants'
merged groups, ``core.inherited``, built afresh in each derivation).  Both are timed without
``memo``, what the first pass of every epoch pays.
The pending records (``Pend``) are built once, outside the timing: the scheduler keeps them
while a job waits (``--with-records`` times building them too, as the first version of this
benchmark did: about 12 ms of pure Python, which ``decide`` pays per reconciler tick).  Median
of ``--repeat`` runs (CPU time of this process, ``time.process_time``: the machine is shared,
so wall time measures the neighbours too; wall shown beside it), after one warm-up.

``--tick`` times instead what a reconciler tick pays, which keeps nothing across ticks:
``decide()`` builds a scheduler from the tick's snapshot (the same 10,000 jobs pending on 128
nodes of 8 GPUs, nothing running) and reports the full pending order.  One derivation = the
dependency pass + ``Scheduler.order`` (``core.order.pending_order``: every queue ranked, the
queues merged, one ``Ranked`` row a job; ``reference``: ``pending_order_by_key``, one
``Scorer.total`` a job and one sort).  Building the scheduler (records and queues, which the
pass needs whatever the order) is timed beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.core.builders import make_config

from allotment.compile.model import Boost, Policy, PriorityWeights
from allotment.config.bulk import bulk_allocation
from allotment.core.context import Context, build_context
from allotment.core.decide import build_scheduler
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.order import pending_order, pending_order_by_key
from allotment.core.priority import (
    Scorer,
    active_boosts,
    dependants,
    dependency_pass,
    propagate_by_relaxing,
)
from allotment.core.snapshot import NodeState, PendingJob, Snapshot
from allotment.core.state import Pend

TEAMS = [f"team{i:02d}" for i in range(15)]
T = 7200.0  # the pass's epoch


def workload(seed: int = 0, jobs: int = 10_000, edges: int = 2_000) -> list[JobSpec]:
    """``jobs`` pending jobs; ``edges`` dependencies, each from a job to an earlier job of its
    own team (so the graph is acyclic and every edge lends urgency); a tenth with deadlines."""
    rng = random.Random(seed)
    by_team: dict[str, list[int]] = {t: [] for t in TEAMS}
    specs: list[JobSpec] = []
    for i in range(jobs):
        team = rng.choice(TEAMS)
        by_team[team].append(i)
        specs.append(JobSpec(
            f"p{i:05d}", float(rng.randint(0, 7200)), team, rng.choice((1, 1, 2, 4, 8, 16, 64)),
            float(rng.randint(600, 86_400)), user=f"u{rng.randint(0, 149)}", priority=rng.randint(-2, 5),
            deadline=float(rng.randint(7200, 200_000)) if rng.random() < 0.1 else None,
        ))
    deps: dict[int, set[int]] = {}
    made = 0
    while made < edges:
        team = rng.choice(TEAMS)
        members = by_team[team]
        if len(members) < 2:
            continue
        a, b = sorted(rng.sample(members, 2))
        if a not in deps.setdefault(b, set()):
            deps[b].add(a)
            made += 1
    return [dataclasses.replace(s, depends_on=tuple(f"p{j:05d}" for j in sorted(deps.get(i, ()))))
            for i, s in enumerate(specs)]


def records(specs: list[JobSpec], users: UserGpus) -> dict[str, list[Pend]]:
    """Every team's pending records, in submission order (declared priority set per derivation),
    each with its (account, user) id in ``users``, as the scheduler queues them."""
    by_team: dict[str, list[Pend]] = {}
    for s in specs:
        p = Pend(s, s.submit, s.submit, 0.0, s.priority, None, s.account)
        p.uid = users.id_of(s.account, s.user)
        by_team.setdefault(s.account, []).append(p)
    return by_team


def graph(specs: list[JobSpec], fast: bool) -> tuple[dict[str, tuple[JobSpec, ...]], dict[str, int]]:
    """The dependency pass: who waits for whom (same team), and propagated declared priority."""
    if fast:
        got = dependency_pass(specs)
        return got.dependants, got.declared
    return dependants(specs), propagate_by_relaxing(specs)


def derive(ctx: object, specs: list[JobSpec], users: UserGpus, by_team: dict[str, list[Pend]] | None,
           fast: bool) -> list[list[Pend]]:
    """The order of every team's pending jobs, from scratch (and the records too, if not given)."""
    deps, declared = graph(specs, fast)
    if by_team is None:
        by_team = records(specs, users)
    for queue in by_team.values():
        for p in queue:
            p.declared = declared[p.jid]
    # the fast path reads what a prerequisite inherits from its dependants merged (``merged``:
    # what both fast walks do), into a fresh cache: what a ``decide`` pays each tick
    scorer = Scorer(ctx, T, 1.4, 8, users, active_boosts(ctx, T), deps, merged=fast)  # type: ignore[arg-type]
    rank = scorer.ranked if fast else scorer.ranked_by_key
    return [rank(by_team[t])[1] for t in sorted(by_team)]


def _context(mode: str, boosts: tuple[Boost, ...], nodes: int) -> Context:
    """The bench's cluster of ``nodes`` 8-GPU nodes and 15 equal teams, scored in ``mode``."""
    weights = PriorityWeights(mode=mode)  # type: ignore[arg-type]
    return build_context(make_config({t: 1 for t in TEAMS}, nodes=nodes,
                                     policy=Policy(priority_weights=weights, boosts=boosts)), "c1")


def tick(specs: list[JobSpec], boosts: tuple[Boost, ...], repeat: int) -> int:
    """What ``decide()`` pays each tick for the order, by the fast path and the reference."""
    nodes = tuple(NodeState(f"n{i:03d}", 8) for i in range(128))
    snap = Snapshot(nodes, (), tuple(PendingJob(s, s.submit, s.submit) for s in specs))
    ms = 1000.0
    for mode in ("fixed", "adaptive", "fifo"):
        ctx = _context(mode, boosts, len(nodes))
        sched = build_scheduler(snap, ctx, T, frozenset())
        pi = sched.inputs(T, {})
        rows = {}
        for fast in (False, True):
            order = pending_order if fast else pending_order_by_key
            rows[fast] = order(sched, pi)  # warm-up
            cpu, build = [], []
            for _ in range(repeat):
                with bulk_allocation():  # as the reconciler's tick runs decide() (reconcile.active)
                    c0 = time.process_time()
                    build_scheduler(snap, ctx, T, frozenset())
                    c1 = time.process_time()
                    dependency_pass(specs)
                    order(sched, pi)
                    c2 = time.process_time()
                cpu.append(c2 - c1)
                build.append(c1 - c0)
            print(f"{mode:<9} {'fast' if fast else 'reference':<9} CPU median {statistics.median(cpu) * ms:7.1f} ms "
                  f"(dependency pass + order; building the scheduler beside: {statistics.median(build) * ms:.1f})"
                  f"  ({repeat} runs)")
        if rows[False] != rows[True]:
            print(f"{mode}: the fast order differs from the reference's", file=sys.stderr)
            return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--with-records", action="store_true", help="time building the Pend records too")
    ap.add_argument("--tick", action="store_true", help="time what decide() pays for the order each tick")
    args = ap.parse_args()
    specs = workload()
    n_edges = sum(len(s.depends_on) for s in specs)
    boosts = (Boost("account:team03", 0.5, dt.datetime(2026, 1, 2, tzinfo=dt.UTC), "bench", "lead"),)
    print(f"{len(specs)} pending jobs, {n_edges} dependency edges, {len(TEAMS)} teams"
          f"{', records built in the timing' if args.with_records else ''}{', as a tick pays' if args.tick else ''}")
    if args.tick:
        return tick(specs, boosts, args.repeat)
    for mode in ("fixed", "adaptive", "fifo"):
        ctx = _context(mode, boosts, 128)
        users = UserGpus.of({(t, f"u{u}"): u % 9 for t in TEAMS for u in range(0, 150, 7)})
        kept = records(specs, users)
        orders = {}
        for fast in (False, True):
            recs = None if args.with_records else kept
            orders[fast] = [[p.jid for p in q] for q in derive(ctx, specs, users, recs, fast)]  # warm-up
            wall, cpu, dep = [], [], []
            for _ in range(args.repeat):
                c0, t0 = time.process_time(), time.perf_counter()
                derive(ctx, specs, users, recs, fast)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                c0 = time.process_time()
                graph(specs, fast)
                dep.append(time.process_time() - c0)
            ms = 1000.0
            print(f"{mode:<9} {'fast' if fast else 'reference':<9} CPU median {statistics.median(cpu) * ms:7.1f} ms "
                  f"(of which the dependency pass {statistics.median(dep) * ms:.1f})  "
                  f"wall median {statistics.median(wall) * ms:7.1f} ms  ({args.repeat} runs)")
        if orders[False] != orders[True]:
            print(f"{mode}: the fast order differs from the reference's", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
