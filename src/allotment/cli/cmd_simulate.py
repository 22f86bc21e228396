"""``allot simulate``: replay a scenario or a trace under a policy and report the Ai2 metrics.

Prints a summary and, with ``--json OUT``, writes every metric (docs/metrics.md; ``--json -``
prints only the JSON).  ``--events FILE`` writes the per-job event log and ``--save DIR`` the whole
run for later questions (docs/trace-format.md).  ``--set KEY=VALUE`` overrides one policy knob for
this run (``--set lookback=3d``), for "what if".  t = 0 is midnight UTC of ``--at``, which for a
simulation defaults to a fixed day (not today) so the same command gives the same figures on
every calendar day."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from allotment.cli.common import SET_HELP, add_at_argument, add_repo_argument, load_compiled
from allotment.core.context import MODES
from allotment.errors import UsageError
from allotment.sim.anchor import DEFAULT_T0, t0_of
from allotment.sim.job_kind import JOB_KINDS
from allotment.traces.bounds import MAX_DAYS

AT_HELP = (
    f"t = 0 of the run is midnight UTC of this day; budget validity dates are evaluated on it "
    f"(default: {DEFAULT_T0.isoformat()}, a fixed Monday, so results do not depend on today)"
)


def register(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p)
    add_at_argument(p, default=DEFAULT_T0, help=AT_HELP)
    add_workload_arguments(p)
    p.add_argument("--policy", choices=MODES, default="budgets", help="scheduler policy (default: budgets)")
    p.add_argument("--json", metavar="OUT", type=Path, help="write the metrics JSON here ('-': only the JSON, on stdout)")
    p.add_argument("--events", metavar="FILE", type=Path, help="write the per-job event log (JSON Lines) here")
    p.add_argument("--save", metavar="DIR", type=Path, help="save the whole run in DIR (for explain/status/report --run)")
    p.add_argument(
        "--no-skip",
        action="store_true",
        help="run the scheduler's plain reference walk (every queue every pass): slower, same output",
    )
    p.add_argument(
        "--profile",
        default="none",
        metavar="NAME[,KEY=S...]",
        help="backend latency profile (sim/latency.py): none, slurm, slurm-test; adjust with "
        "cycle=, requeue=, launch=, limit=, read= seconds, e.g. slurm,requeue=11 (default: none)",
    )
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        dest="overrides",
        help=SET_HELP,
    )
    p.set_defaults(func=run)


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--scenario", help="built-in scenario: ai2, ai2-big-gangs (its previous calibration), ai2-uncapped-runs (ai2 with training runs not capped at the allocation), ai2-contended, ai2-pipelines (ai2 plus data prep -> train -> eval pipelines)")
    src.add_argument("--trace", type=Path, metavar="FILE", help="canonical trace (JSONL)")
    p.add_argument("--cluster", help="cluster to simulate (default: the largest)")
    p.add_argument(
        "--days",
        type=float,
        default=None,
        help="horizon in days (scenario default 30; a trace runs until every job is done)",
    )
    p.add_argument("--seed", type=int, default=0, help="scenario seed (default 0)")


def parse_overrides(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE, e.g. lookback=3d")
        out[key.strip()] = value.strip()
    return out


def load_workload(args: argparse.Namespace, config: Any) -> tuple[Any, str, float | None]:
    from allotment.sim.workloads import from_scenario, stream_trace

    cluster = args.cluster or config.largest_cluster()
    if cluster not in config.clusters:
        raise UsageError(f"--cluster {cluster}: unknown; known: {', '.join(sorted(config.clusters))}")
    if args.days is not None and not 0 < args.days <= MAX_DAYS:
        raise UsageError(f"--days must be positive and at most {MAX_DAYS} (the trace bound), got {args.days:g}")
    if args.scenario:
        days = args.days if args.days is not None else 30.0
        return from_scenario(config, args.scenario, cluster=cluster, days=days, seed=args.seed), cluster, days
    if not args.trace.is_file():
        raise UsageError(f"--trace {args.trace}: no such file")
    # read as the run goes: memory follows the jobs alive, not the file (docs/security.md)
    return stream_trace(args.trace, config, cluster), cluster, args.days


def run(args: argparse.Namespace) -> int:
    from functools import partial

    from allotment.atomic_file import temp_beside, write_text
    from allotment.cli.out_paths import check_out_path
    from allotment.cli.progress import Progress, wanted
    from allotment.sim.event_file import EventFile
    from allotment.sim.latency import parse_profile
    from allotment.sim.rundir import RunSource, metrics_json, save_run
    from allotment.sim.runner import simulate
    from allotment.traces.job_stream import TakenJobs
    from allotment.traces.scenarios.workload import Workload

    check_out_path(args.json, "--json", make_parents=True)
    check_out_path(args.events, "--events", make_parents=True)
    check_out_path(args.save, "--save", folder=True, make_parents=True)
    overrides = parse_overrides(args.overrides)
    latency = parse_profile(args.profile)
    config = load_compiled(args)
    workload, cluster, days = load_workload(args, config)
    if args.save is None and isinstance(workload, Workload):
        # nothing reads the workload after the run: the run lets each job go once it is gone
        # from the run too (traces/job_stream.py TakenJobs; issue 27 item 4)
        workload = TakenJobs.of(workload)
    json_to_stdout = args.json is not None and str(args.json) == "-"
    span = f"{days:g} days" if days is not None else "to the end"
    sim = partial(
        simulate, config, workload, cluster=cluster, days=days, seed=args.seed, policy=args.policy,
        overrides=overrides, reference=args.no_skip, latency=latency,
    )
    # events only when asked, written as the run goes (sim/event_file.py): to --events, and for
    # --save to a plain file beside its folder that save_run copies in, removed after
    for_save = temp_beside(args.save) if args.save is not None else None
    logs = tuple(p for p in (args.events, for_save) if p is not None)
    try:
        n_jobs = len(workload.jobs) if isinstance(workload, Workload) else workload.count  # a FileJobs
        with Progress(f"simulating {n_jobs:,} jobs, {span}, on {cluster}",
                      enabled=wanted(machine_stdout=json_to_stdout)):
            if not logs:
                result = sim()
            else:  # their folders were made by check_out_path
                with EventFile(*logs) as out:
                    result = sim(on_event=out)
                    assert result.header is not None, "simulate() always returns its header"
                    out.finish(result.header)
        m = result.metrics
        if not json_to_stdout:
            print(render_summary(m, result.sim_seconds))
        if args.json is not None:
            if json_to_stdout:
                sys.stdout.write(metrics_json(m))
            else:
                write_text(args.json, metrics_json(m))
        if args.save is not None and for_save is not None:
            src = RunSource(
                scenario=args.scenario,
                trace=str(args.trace) if args.trace is not None else None,
                days=days,
                t0=t0_of(config.at).isoformat(),
                no_skip=bool(getattr(args, "no_skip", False)),
                overrides=overrides,
            )
            with Progress(f"saving the run to {args.save}", enabled=wanted(machine_stdout=json_to_stdout)):
                save_run(args.save, config, workload, result, src, events=for_save)
                from allotment.legible.run_index import write_index

                write_index(args.save)  # for allot explain (issue 27 item 5)
    finally:
        if for_save is not None:
            for_save.unlink(missing_ok=True)
    return 0


def completion_line(m: dict[str, Any]) -> str:
    """Job completion time, chain and pipeline makespan, deadlines missed (docs/metrics.md);
    unfinished ones counted apart."""
    c = m["completion"]
    parts = [f"completion time mean/p90: {c['mean']:.0f}/{c['p90']:.0f}s (n={c['n']:,}, {c['unfinished']:,} unfinished)"]
    for key, what in (("chains", "chain"), ("pipelines", "pipeline")):
        ch = m[key]
        if ch["n"] or ch["unfinished"]:
            parts.append(f"{what} makespan mean/p90: {ch['mean']:.0f}/{ch['p90']:.0f}s "
                         f"(n={ch['n']:,}, {ch['unfinished']:,} unfinished)")
        else:
            parts.append(f"no {key}")
    d = m["deadlines"]
    if d["jobs"]:
        parts.append(f"deadlines missed {d['missed']:,} of {d['jobs']:,} ({d['late']:,} ended late, "
                     f"{d['unfinished']:,} unfinished past it)")
    else:
        parts.append("no deadlines")
    return "; ".join(parts)


def render_summary(m: dict[str, Any], sim_seconds: float | None = None) -> str:
    w = m["wait"]
    lines = [
        f"policy {m['policy']} on {m['cluster']} ({m['capacity_gpus']} GPUs), {m['days']:g} days, "
        f"{m['jobs']['submitted']:,} jobs submitted, {m['jobs']['completed']:,} completed",
        f"occupancy {m['occupancy']:.3f} (allocated {m['allocated_fraction']:.3f}, "
        f"unallocated {m['unallocated_fraction']:.3f}); demand {m['demand_ratio']:.2f}x capacity",
        f"delivered/owed {m['delivered_over_owed']:.3f} "
        f"({m['delivered_gpu_hours']:,.0f} of {m['owed_gpu_hours']:,.0f} owed GPU-hours); "
        f"{m['teams_at_or_above_95']} of {len(m['teams'])} teams at >= 0.95, lowest {m['teams_min_ratio']:.3f} "
        f"(hour by hour; uncapped received {m['received']:.3f})",
        f"wait p50/p90: all {w['all']['p50']:.0f}/{w['all']['p90']:.0f}s, "
        f"large {w['large']['p50']:.0f}/{w['large']['p90']:.0f}s",
        "wait p50/p90 by kind: "
        + ", ".join(f"{k} {w[k]['p50']:.0f}/{w[k]['p90']:.0f}s (n={w[k]['n']:,})" for k in JOB_KINDS),
        completion_line(m),
        f"preemptions {m['preemptions']:,} ({m['lost_gpu_hours']:,.0f} GPU-hours lost); "
        f"drains {m['drains']} (p90 {m['drain_seconds']['p90']:.0f}s, {m['human_drains']} need a human)",
        "",
        f"{'team':<24} {'owed':>12} {'delivered':>12} {'ratio':>7}",
    ]
    for name, t in sorted(m["teams"].items()):
        lines.append(f"{name:<24} {t['owed']:>12,.0f} {t['delivered']:>12,.0f} {t['ratio']:>7.3f}")
    if sim_seconds is not None:
        lines.append(f"(simulated in {sim_seconds:.1f}s)")
    return "\n".join(lines)
