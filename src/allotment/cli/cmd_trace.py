"""``allot trace``: make canonical traces (docs/trace-format.md).

* ``allot trace import --format swf|alibaba-gpu|sacct|csv FILE -o OUT.jsonl [--repo-out DIR]``
  converts a real trace, filling unknown fields by documented rules, and can write a matching
  config repository so the result simulates as is.  Trace and repository land together or not
  at all.
* ``allot trace generate --scenario ai2 [--days N] [--seed N] -o OUT.jsonl`` writes a built-in
  scenario so it can be inspected, edited and replayed with ``allot simulate --trace``.
* ``allot trace check FILE [--repo DIR]`` validates a canonical trace and prints what it holds
  and that every job replays on the config (``--repo``, or the one holding the current folder,
  found as ``allot validate`` finds it; with none, the format only).

The import's options and run live in ``trace_import``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allotment.cli.common import (
    add_at_argument,
    add_repo_argument,
    config_root_near,
    load_compiled,
    positive_float,
)
from allotment.cli.help_text import RawDescriptionHelpFormatter
from allotment.cli.trace_import import (
    add_fit_arguments,
    fit_from_args,
    register_import,
)
from allotment.core.jobs import JobSpec
from allotment.errors import UsageError
from allotment.traces.bounds import MAX_DAYS
from allotment.traces.canonical import iter_trace, sorted_items, write_trace

_DESCRIPTION = """Make canonical traces (JSON Lines, docs/trace-format.md).

  allot trace import --format swf|alibaba-gpu|sacct|csv FILE -o OUT.jsonl [--repo-out DIR]
      convert a real trace, filling unknown fields by documented rules; --repo-out also
      writes a matching config repository (trace and repository land together or not at all)
  allot trace generate --scenario ai2 [--days N] [--seed N] -o OUT.jsonl
      write a built-in scenario, to inspect, edit and replay with allot simulate --trace
  allot trace check FILE [--repo DIR [--cluster NAME]]
      validate a canonical trace and print what it holds, and that every job replays on the
      config (--repo, or the one holding the current folder, as allot validate finds it)
"""


def register(p: argparse.ArgumentParser) -> None:
    p.description = _DESCRIPTION
    p.formatter_class = RawDescriptionHelpFormatter
    tsub = p.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    tsub.required = True
    register_import(tsub)

    gen = tsub.add_parser("generate", help="write a built-in scenario as a canonical trace")
    gen.add_argument("--scenario", required=True, help="scenario name (ai2, ai2-big-gangs, ai2-uncapped-runs, ai2-contended, ai2-pipelines)")
    gen.add_argument(
        "--days", type=positive_float, default=30.0, help="days to generate (default 30)"
    )
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument(
        "-o", "--output", required=True, type=Path, help="trace to write (.jsonl or .jsonl.gz)"
    )
    gen.add_argument("--cluster", help="cluster of --repo (default: the largest)")
    add_repo_argument(gen)
    add_at_argument(gen)
    gen.set_defaults(func=run_generate)

    chk = tsub.add_parser(
        "check",
        help="validate a canonical trace and summarize it",
        description="Validate a canonical trace: format and bounds always; with a config "
        "repository (--repo, or the one holding the current folder, as allot validate finds "
        "it), also that every job replays on a cluster of that config (account a budget leaf, GPU type "
        "known, job not larger than the cluster), exactly as allot simulate --trace checks.",
    )
    chk.add_argument("file", metavar="FILE", type=Path, help="canonical trace (.jsonl[.gz])")
    add_fit_arguments(chk, found=True)
    chk.add_argument("--cluster", help="cluster of --repo to check against (default: the largest)")
    add_at_argument(chk)
    chk.set_defaults(func=run_check)


def run_generate(args: argparse.Namespace) -> int:
    from allotment.cli.out_paths import check_out_path
    from allotment.traces.scenarios import get_scenario

    check_out_path(args.output, "-o", make_parents=True)
    if args.days > MAX_DAYS:
        raise UsageError(f"--days {args.days:g}: a trace spans at most {MAX_DAYS} days")
    generate = get_scenario(args.scenario)
    config = load_compiled(args)
    cluster = args.cluster or config.largest_cluster()
    if cluster not in config.clusters:
        raise UsageError(
            f"--cluster {cluster}: not in {args.repo}; known: {', '.join(sorted(config.clusters))}"
        )
    workload = generate(config, cluster=cluster, days=args.days, seed=args.seed)
    header = {
        "source": f"scenario:{args.scenario}",
        "generator": "allot trace generate",
        "seed": args.seed,
        "days": args.days,
        "cluster": cluster,
    }
    n = write_trace(args.output, sorted_items(workload.jobs, workload.node_events), header=header)
    print(
        f"wrote {len(workload.jobs):,} jobs and {len(workload.node_events):,} node events "
        f"({n:,} lines) of scenario {args.scenario} on {cluster}, {args.days:g} days, "
        f"seed {args.seed}, to {args.output}"
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise UsageError(f"{args.file}: no such file")
    if args.repo is None:  # as allot validate finds it; none around: the format only
        args.repo = config_root_near(Path("."))
    fit = fit_from_args(args)
    # streamed: memory follows one line and the id index, not the file (issue 32, item 5)
    jobs = node_events = 0
    accounts: set[str] = set()
    gpu_seconds = span = 0.0
    for item in iter_trace(args.file, display_name=str(args.file), fit=fit):
        if isinstance(item, JobSpec):
            jobs += 1
            accounts.add(item.account)
            gpu_seconds += item.gpus * item.work
            span = max(span, item.submit + item.work)
        else:
            node_events += 1
    gpu_hours = gpu_seconds / 3600
    print(
        f"ok: {jobs:,} jobs, {node_events:,} node events, {len(accounts):,} accounts, "
        f"{gpu_hours:,.0f} GPU-hours, span {span / 86400:.1f} days"
        + (
            f"; every job replays on {fit.cluster} of {args.repo}"
            if fit is not None
            else "; accounts, GPU types and sizes not checked (give --repo DIR)"
        )
    )
    return 0
