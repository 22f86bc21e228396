"""``allot sweep``: a policy knob (or several) over its values, on several seeds' workloads.

  allot sweep --scenario ai2 --days 2 --seeds 1-3 --set lookback=3d,7d [--executor slurm]

Each seed's workload is generated once and every combination of the ``--set`` values replays
it (common random numbers: two rows of one seed differ by the knobs alone).  The runs go to
``--executor``: this machine's processes (``--workers``) or one Slurm job array
(docs/plan.md, "Executors"); either gives the same bytes.  Prints one line of headline metrics
per (knob values, seed); ``--json OUT`` writes every metric of every run.  Unknown knobs and bad
values are reported all at once before any work (exit 2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allotment.cli.common import SET_HELP, add_at_argument, add_repo_argument, positive_int
from allotment.cli.executor_args import add_executor_arguments, executor_of
from allotment.sim.anchor import DEFAULT_T0


def register(p: argparse.ArgumentParser) -> None:
    from allotment.cli.cmd_plan import parse_seeds
    from allotment.core.context import MODES

    p.formatter_class = _raw_formatter()
    add_repo_argument(p)
    add_at_argument(p, default=DEFAULT_T0, help="t = 0 of every run is midnight UTC of this day "
                    f"(default: {DEFAULT_T0.isoformat()}, as for allot simulate)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--scenario", help="built-in scenario: ai2, ai2-big-gangs, ai2-uncapped-runs, ai2-contended")
    src.add_argument("--trace", type=Path, metavar="FILE", help="canonical trace (one workload: the first seed only)")
    p.add_argument("--cluster", help="cluster to simulate (default: the largest)")
    p.add_argument("--days", type=float, default=None,
                   help="horizon in days (scenario default 30; a trace runs until every job is done)")
    p.add_argument("--seeds", type=parse_seeds, default=(1, 2, 3),
                   help="scenario seeds, a range or a list: 1-5 or 1,3,7 (default: 1-3)")
    p.add_argument("--policy", choices=MODES, default="budgets", help="scheduler policy (default: budgets)")
    p.add_argument("--profile", default="none", metavar="NAME[,KEY=S...]",
                   help="backend latency profile, as for allot simulate (default: none)")
    p.add_argument("--set", metavar="KNOB=V1[,V2...]", action="append", default=[], dest="grid",
                   help=SET_HELP.replace("override a policy knob for this run",
                                         "sweep a policy knob over comma-separated values"))
    p.add_argument("--workers", type=positive_int, default=2, metavar="N",
                   help="local executor: run N simulations at once (default: 2)")
    add_executor_arguments(p)
    p.add_argument("--json", metavar="OUT", type=Path,
                   help="write every metric of every run here ('-': only the JSON, on stdout)")
    p.set_defaults(func=run)


def _raw_formatter() -> type[argparse.HelpFormatter]:
    from allotment.cli.help_text import RawDescriptionHelpFormatter

    return RawDescriptionHelpFormatter


def run(args: argparse.Namespace) -> int:
    from allotment.atomic_file import write_text
    from allotment.cli.common import load_compiled
    from allotment.cli.out_paths import check_out_path
    from allotment.cli.progress import Progress, wanted
    from allotment.errors import UsageError
    from allotment.plan.sweep import SweepSpec, parse_grid, sweep
    from allotment.plan.sweep_render import render_json, render_table
    from allotment.sim.latency import parse_profile
    from allotment.traces.bounds import MAX_DAYS

    check_out_path(args.json, "--json", make_parents=True)
    latency = parse_profile(args.profile)
    executor = executor_of(args, args.workers)
    if args.days is not None and not 0 < args.days <= MAX_DAYS:
        raise UsageError(f"--days must be positive and at most {MAX_DAYS}, got {args.days:g}")
    if args.trace is not None and not args.trace.is_file():
        raise UsageError(f"--trace {args.trace}: no such file")
    config = load_compiled(args)
    cluster = args.cluster or config.largest_cluster()
    if cluster not in config.clusters:
        raise UsageError(f"--cluster {cluster}: unknown; known: {', '.join(sorted(config.clusters))}")
    knobs = parse_grid(args.grid, config, cluster)
    days = args.days if args.days is not None or args.trace is not None else 30.0
    seeds = args.seeds[:1] if args.trace is not None else args.seeds
    spec = SweepSpec(config, cluster, days, args.scenario, args.trace, args.policy, latency)
    to_stdout = args.json is not None and str(args.json) == "-"
    bar = Progress("sweeping", enabled=wanted(machine_stdout=to_stdout))
    with bar:
        rows = sweep(spec, knobs, seeds, executor, progress=bar.runs("simulating the grid (runs)"))
    doc = render_json(spec, knobs, seeds, rows)
    if to_stdout:
        sys.stdout.write(doc)
        return 0
    sys.stdout.write(render_table(knobs, rows))
    if args.json is not None:
        write_text(args.json, doc)
    return 0
