"""``allot replay``: replay a trace as real jobs on a real Slurm, with the reconciler in active
mode alongside, and write what happened as the simulator's event log and metrics JSON.

Jobs are submitted at their trace times divided by ``--speedup`` (work and minimum runtimes are
compressed the same way; event times are written back in trace seconds).  Needs ``SLURM_CONF``
(or the default Slurm config) and the right to submit to every account of the trace as the
current user.  docs/fidelity.md shows a replay side by side with ``allot simulate``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from allotment.cli.common import add_at_argument, add_repo_argument, load_compiled
from allotment.cli.out_paths import check_out_path
from allotment.durations import parse_duration
from allotment.errors import UsageError


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend", choices=("slurm",), default="slurm", help="backend (default: slurm)"
    )
    p.add_argument(
        "--trace", type=Path, required=True, metavar="FILE", help="canonical trace (JSONL)"
    )
    p.add_argument(
        "--speedup", type=float, default=1.0, metavar="K", help="compress time K-fold (default 1)"
    )
    add_repo_argument(p)
    add_at_argument(p)
    p.add_argument("--cluster", help="cluster of the inventory (default: the largest)")
    p.add_argument(
        "--state",
        type=Path,
        default=Path(".allot-replay"),
        metavar="DIR",
        help="reconciler state, job scripts and checkpoints (default: .allot-replay)",
    )
    p.add_argument("--events", type=Path, metavar="OUT", help="write the event log (JSONL) here")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the metrics JSON here")
    p.add_argument(
        "--interval",
        help="reconciler tick (default: the policy's reconcile_interval, which --compare's "
        "profile passes at too)",
    )
    p.add_argument("--max-wall", default="1h", help="cancel what is left after this (default 1h)")
    p.add_argument(
        "--compare",
        metavar="PROFILE",
        help="also simulate the trace with this latency profile (e.g. slurm-test), print "
        "the fidelity table and exit 1 when a target is missed",
    )
    p.add_argument(
        "--from-events",
        type=Path,
        metavar="FILE",
        help="do not run anything: take the replay's event log from FILE (with --compare)",
    )
    p.add_argument(
        "--epoch-phase",
        type=float,
        default=0.0,
        metavar="S",
        help="with --from-events: how far the replay's time 0 lay after a fair-share epoch "
        "boundary (its metrics JSON's epoch_phase_s); a replay measures it itself",
    )
    p.add_argument(
        "--reads",
        type=Path,
        metavar="FILE",
        help="with --from-events: the replay's reads.json (when its ticks read the cluster); "
        "the gate then judges the simulation passing at those reads, the nominal profile "
        "reported beside it (a replay uses its own)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from allotment.reconcile.reconciler import Options
    from allotment.reconcile.replay.events import write_events
    from allotment.reconcile.replay.submit import tiers
    from allotment.traces.reader import read_trace

    _check(args)
    check_out_path(args.events, "--events", make_parents=True)
    check_out_path(args.json, "--json", make_parents=True)
    config = load_compiled(args)
    cluster = args.cluster or config.largest_cluster()
    if cluster not in config.clusters:
        raise UsageError(
            f"--cluster {cluster}: unknown; known: {', '.join(sorted(config.clusters))}"
        )
    trace = read_trace(args.trace)
    pol = config.policy_for(cluster)
    state = args.state.resolve()
    interval = _interval(args, pol.reconcile_interval_s)
    opts = Options(
        cluster=cluster,
        tiers_s=tiers(trace.jobs, pol.default_min_runtime_s, args.speedup),
        health_file=str(state / "health.txt"),
        interval_s=interval,
    )
    late = 0
    reads: tuple[float, ...] | None = None
    jobs_dir: Path | None = state / "jobs"  # the replayed scripts' own seconds (``.times``)
    if args.from_events is not None:
        from allotment.core.context import build_context
        from allotment.reconcile.replay.event_checks import read_consistent_events

        ctx = build_context(config, cluster)
        events = read_consistent_events(
            args.from_events, jobs={j.id for j in trace.jobs}, accounts=set(ctx.leaves),
            capacity_gpus=ctx.capacity_gpus,
        )
        phase = args.epoch_phase
        if args.reads is not None:
            from allotment.reconcile.replay.read_times import read_reads

            reads = read_reads(args.reads)
        # a saved replay's scripts' seconds sit beside its reads (OUT/replay/jobs)
        jobs_dir = args.reads.parent / "jobs" if args.reads is not None else None
    else:
        events, phase, late, reads = _replay(args, config, cluster, trace, state, opts, interval)
    if args.events:
        write_events(args.events, events)
    m, ctx, node_gpus = _metrics(args, config, cluster, events, trace)
    m["epoch_phase_s"] = phase
    m["interval_s"] = interval
    m["late_ticks"] = late  # reconciler ticks skipped because the one before overran its slot
    if args.json:
        args.json.write_text(json.dumps(m, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    w = m["wait"]
    print(
        f"replayed {m['jobs']['submitted']} jobs on {cluster} ({args.backend}): occupancy "
        f"{m['occupancy']:.3f}, preemptions {m['preemptions']}, wait p50/p90 debug "
        f"{w['debug']['p50']:.0f}/{w['debug']['p90']:.0f}s, all {w['all']['p50']:.0f}/{w['all']['p90']:.0f}s"
        f"; epoch phase {phase:g}s; ticks every {interval:g}s, {late} late"
    )
    if args.compare:
        from allotment.reconcile.replay.stalls import replay_stalls, void_line

        void = void_line(replay_stalls(reads, events, jobs_dir, interval), interval)
        return _compare(
            args, config, cluster, trace, events, node_gpus, ctx.capacity_gpus, phase, reads, void
        )
    return 0


def _check(args: argparse.Namespace) -> None:
    """Every usage error before anything runs (a replay takes minutes)."""
    if not args.speedup > 0:
        raise UsageError(f"--speedup must be positive, got {args.speedup}")
    if not args.trace.is_file():
        raise UsageError(f"--trace {args.trace}: no such file")
    if args.compare and args.speedup != 1.0:
        # the profile's delays are the cluster's real seconds; compressed they would not be
        raise UsageError("--compare needs --speedup 1")
    if args.from_events is not None and not args.compare:
        raise UsageError("--from-events is only useful with --compare")
    if args.reads is not None and args.from_events is None:
        raise UsageError("--reads is only useful with --from-events (a replay keeps its own)")
    if args.reads is not None and not args.reads.is_file():
        raise UsageError(f"--reads {args.reads}: no such file")
    if args.compare:
        from allotment.sim.latency import parse_profile

        parse_profile(args.compare)  # a bad profile fails now, not after the replay


def _interval(args: argparse.Namespace, policy_interval_s: float) -> float:
    """The replay's tick; with --compare the profile's passes must fall on the same grid, or
    the comparison measures the mismatch instead of the cluster."""
    try:
        interval = float(policy_interval_s if args.interval is None else parse_duration(args.interval))
    except ValueError as exc:
        raise UsageError(f"--interval: {exc}") from None
    if not interval > 0:
        raise UsageError(f"--interval must be positive, got {args.interval}")
    if args.compare:
        from allotment.sim.latency import parse_profile

        cycle = parse_profile(args.compare).pass_interval(float(policy_interval_s))
        if cycle != interval:
            raise UsageError(
                f"--interval {interval:g}s but --compare {args.compare} passes every {cycle:g}s: "
                "the simulation must pass where the reconciler ticks"
            )
    return interval


def _metrics(args: argparse.Namespace, config: Any, cluster: str, events: Any, trace: Any) -> Any:
    """The simulator's metrics of the replay's events, with the run's identity added."""
    from allotment.core.context import build_context
    from allotment.core.contract import min_runtime
    from allotment.reconcile.replay.events import metrics

    ctx = build_context(config, cluster)
    node_gpus = {
        n: g.gpus_per_node for g in config.clusters[cluster].node_groups for n in g.node_names
    }
    m = metrics(
        events,
        teams=ctx.leaves,
        capacity=ctx.capacity_gpus,
        entitlement=ctx.entitlement_gpus,
        node_gpus=node_gpus,
        debug_threshold_s=float(ctx.policy.debug_threshold_s),
        min_runtimes={j.id: min_runtime(j.min_runtime, ctx.policy) for j in trace.jobs},
        interactive=ctx.policy.interactive,
    )
    m.update(
        policy="budgets",
        cluster=cluster,
        backend=args.backend,
        speedup=args.speedup,
        capacity_gpus=ctx.capacity_gpus,
        days=round(max((e.t for e in events), default=0) / 86400, 4),
    )
    return m, ctx, node_gpus


def _replay(
    args: argparse.Namespace,
    config: Any,
    cluster: str,
    trace: Any,
    state: Path,
    opts: Any,
    interval_s: float,
) -> Any:
    from allotment.cli.progress import Progress, wanted
    from allotment.reconcile.reconciler import Reconciler
    from allotment.reconcile.replay.drive import Replay, epoch_phase
    from allotment.reconcile.replay.read_times import ReadTimedSlurm
    from allotment.reconcile.source import open_source

    rec_dir = state / "reconciler"
    # keeps when each tick read, for --compare's passes; what slurm.conf lacks (a replay on such
    # a cluster measures another setup) the reconciler logs at its first tick and keeps as its
    # BackendConfigIncomplete condition (Reconciler.config_gaps), in STATE/reconciler/status.json
    backend = ReadTimedSlurm()
    reconciler = Reconciler(backend, open_source(str(args.repo), "main", rec_dir), rec_dir, opts)
    try:
        replay = Replay(
            config,
            cluster,
            trace.jobs,
            trace.node_events,
            args.speedup,
            state,
            backend.runner,
            reconciler,
            interval_s=interval_s,
            max_wall_s=parse_duration(args.max_wall),
            reads_wall=backend.reads,
        )
        with Progress(f"replaying {len(trace.jobs)} jobs on {cluster}", enabled=wanted(),
                      total=len(trace.jobs)) as bar:
            replay.progress = bar.update
            events = replay.run()
        phase = epoch_phase(replay.t0, config.policy_for(cluster).fairshare_period_s)
        return events, phase, replay.late_ticks, replay.reads
    finally:
        reconciler.close()


def _compare(
    args: argparse.Namespace,
    config: Any,
    cluster: str,
    trace: Any,
    events: Any,
    node_gpus: dict[str, int],
    capacity: int,
    phase: float,
    reads: tuple[float, ...] | None,
    void: str | None = None,
) -> int:
    """Print the fidelity table and exit 1 on a miss; on a replay the machine stopped (``void``,
    ``replay.stalls``) print the tables for information and the void line, and exit
    ``EXIT_VOID`` (3): neither passed nor failed, to be run again.  With the replay's read instants the
    gated simulation passes where the ticks really read and launches a start decided at the
    same read when Slurm launched it (``read_times.as_ran``): the gate
    judges whether the same observations gave the same decisions, not the machine's timing;
    the nominal profile's table (what a plan predicts) is printed first, for information."""
    from allotment.reconcile.replay.compare import compare, render
    from allotment.reconcile.replay.events import write_events
    from allotment.reconcile.replay.simlog import simulated_events
    from allotment.sim.latency import parse_profile
    from allotment.traces.scenarios.workload import Workload

    nominal = parse_profile(args.compare)
    work = Workload.of(trace.jobs, trace.node_events)
    runs = [("nominal profile", nominal, ".nominal.sim.jsonl" if reads else ".sim.jsonl")]
    if reads:
        from allotment.reconcile.replay.read_times import as_ran

        label = f"passes at the {len(reads)} reads and launches as run"
        runs.append((label, as_ran(nominal, reads, events, tuple(trace.node_events)), ".sim.jsonl"))
    missed: list[str] = []
    for label, profile, suffix in runs:
        sim = simulated_events(config, cluster, work, profile, epoch_phase_s=phase)
        if args.events:
            write_events(args.events.with_name(args.events.stem + suffix), sim)
        rows = compare(events, sim, capacity=capacity, node_gpus=node_gpus)
        missed = [r.metric for r in rows if r.ok is False]
        last = profile is runs[-1][1]
        gated = last and void is None
        print(f"{label}{'' if gated else ' (information, not gated)'}:")
        print(render(rows))
        print(
            f"fidelity{'' if gated else (' (void)' if last else ' (nominal)')}: {len(missed)} of "
            f"{sum(r.ok is not None for r in rows)} targets missed"
            + (f": {', '.join(missed)}" if missed else "")
        )
    if void is not None:
        from allotment.reconcile.replay.stalls import EXIT_VOID

        print(void)
        return EXIT_VOID
    return 1 if missed else 0
