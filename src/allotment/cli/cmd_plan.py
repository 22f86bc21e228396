"""`allot plan`: what a budget change does, before anyone approves it.

Exit codes: 0 plan made; 1 the change breaks a policy rule (share floor, missing approval when
``--approved-by`` is given); 2 invalid input (errors in head are reported as ``allot validate``
reports them; with ``--out`` a comment listing them replaces the plan, see ``plan.failure``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from allotment.atomic_file import write_text
from allotment.cli.common import add_at_argument, add_repo_argument, at_date, positive_int
from allotment.cli.executor_args import add_executor_arguments, executor_of
from allotment.cli.out_paths import check_out_path
from allotment.errors import ConfigError, UsageError
from allotment.neutral import neutral_lines
from allotment.plan.build import PlanRequest, make_plan
from allotment.plan.failure import render_failure, workflow_commands
from allotment.plan.impact import WORKERS
from allotment.plan.plan_json import render_json
from allotment.plan.render import render_markdown

MAX_SEEDS = 64


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compare the config of --head (default: the working tree) with the merge-base of "
        "BASE, simulate both on the same workloads over several seeds, and say who must approve."
    )
    p.add_argument("--base", required=True, help="target revision, e.g. origin/main")
    p.add_argument("--head", help="revision to plan (default: the working tree)")
    add_repo_argument(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", type=Path, help="canonical trace to replay under both configs")
    src.add_argument("--scenario", help="built-in workload scenario: ai2-contended (default: every team wants more than its slice, docs/plan.md), ai2, ai2-big-gangs")
    p.add_argument("--days", type=float, help="measured days per seed, after a warm-up of one "
                   "lookback window that is simulated and left out (default: 7)")
    p.add_argument("--cluster", help="cluster to simulate (default: the largest)")
    p.add_argument(
        "--seeds",
        type=parse_seeds,
        help="seeds to simulate, a range or a list: 1-5 or 1,3,7 (default: 1..plan_seeds of the "
        "base revision's policies/scheduler.yaml, 5 unless set)",
    )
    p.add_argument("--no-simulate", action="store_true", help="skip the projected impact")
    p.add_argument(
        "--profile",
        default="none",
        metavar="NAME[,KEY=S...]",
        help="the backend's latency profile both sides are simulated with (sim/latency.py): none, "
        "slurm, slurm-test; adjust with cycle=, requeue=, launch=, limit=, read= seconds, as for "
        "allot simulate (default: none)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=WORKERS,
        metavar="N",
        help="--executor local: simulate on N cores, each seed in its own process at once (up to 3 a "
        "core; 1: all in this process); any N gives the same plan (default: 2)",
    )
    add_executor_arguments(p)
    p.add_argument(
        "--cache-dir",
        type=Path,
        help="simulation cache (default: $XDG_CACHE_HOME/allotment; none when CI=true)",
    )
    add_at_argument(p)
    p.add_argument(
        "--approved-by",
        action="append",
        metavar="'NAME <EMAIL>'",
        help="an approval given so far (repeatable); missing approvals then exit 1",
    )
    p.add_argument("--author", action="append", default=[], help="extra author e-mail (repeatable)")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    p.add_argument("--out", type=Path, help="write here instead of stdout (default: stdout)")
    p.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="also write the plan as one self-contained HTML page: the budget tree before and "
        "after as icicles of shares, the entitlement moves and the projected impact",
    )
    p.add_argument(
        "--invalid-comment",
        action="store_true",
        help="when head does not validate, write a comment listing the errors to --out "
        "(it replaces the stale plan; the exit code is still 2)",
    )
    p.add_argument(
        "--github-annotations",
        action="store_true",
        help="print validation errors as GitHub ::error workflow commands too",
    )
    p.set_defaults(func=run)


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1-5`` or ``1,3,7`` (or a mix, ``1-3,9``) -> sorted distinct seeds."""
    seeds: set[int] = set()
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            a = int(lo)
            b = int(hi) if sep else a
            if b < a or b - a >= MAX_SEEDS:
                raise ValueError
            seeds.update(range(a, b + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: write a range or a list of seeds, like 1-5 or 1,3,7"
        ) from None
    if not seeds or len(seeds) > MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"{text!r}: between 1 and {MAX_SEEDS} seeds")
    return tuple(sorted(seeds))


def write_output(text: str, out: Path | None) -> None:
    """Write all or nothing: a half-written plan.md must never be posted."""
    if out is None:
        sys.stdout.write(neutral_lines(text))  # a CI log: no line may start a workflow command
        return
    write_text(out.resolve(), text)


def run(args: argparse.Namespace) -> int:
    check_out_path(args.out)
    check_out_path(args.report, "--report")
    if args.days is not None and not 0 < args.days <= 366:
        raise UsageError("--days must be between 0 and 366")
    req = PlanRequest(
        repo=args.repo,
        base=args.base,
        head=args.head,
        at=at_date(args),
        approved_by=tuple(args.approved_by) if args.approved_by is not None else None,
        authors=tuple(args.author),
    )
    from allotment.cli.progress import Progress, wanted

    impact = None
    bar = Progress("planning", enabled=wanted(machine_stdout=args.format == "json" and args.out is None))
    if not args.no_simulate:
        from allotment.plan.impact_setup import impact_function
        from allotment.sim.latency import parse_profile

        latency = parse_profile(args.profile)  # a bad profile is a usage error before any work

        impact = impact_function(
            repo=args.repo,
            trace=args.trace,
            scenario=args.scenario,
            days=args.days,
            seeds=args.seeds,
            cache_dir=args.cache_dir,
            cluster=args.cluster,
            env=os.environ,
            latency=latency,
            workers=args.workers,
            executor=executor_of(args, args.workers),
            progress=bar.runs("simulating the impact (runs of both sides)"),
        )
    try:
        with bar:
            plan = make_plan(req, impact)
    except ConfigError as exc:
        if args.github_annotations:
            sys.stdout.write(workflow_commands(exc.diagnostics))
        if args.invalid_comment and args.out is not None and args.format == "markdown":
            write_output(render_failure(exc.diagnostics, args.head or "working tree"), args.out)
        raise
    text = render_json(plan) if args.format == "json" else render_markdown(plan)
    write_output(text, args.out)
    if args.report is not None:
        from allotment.legible.plan_report import render_plan_report

        write_output(render_plan_report(plan), args.report)
    return 1 if plan.violations else 0
