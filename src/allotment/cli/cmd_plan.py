"""`allot plan`: what a budget change does, before anyone approves it.

Exit codes: 0 plan made; 1 the change breaks a policy rule (share floor, missing approval when
``--approved-by`` is given); 2 invalid input (errors in head are reported as ``allot validate``
reports them).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from allotment.cli.common import add_at_argument, add_repo_argument, at_date
from allotment.errors import UsageError
from allotment.plan.build import PlanRequest, make_plan
from allotment.plan.plan_json import render_json
from allotment.plan.render import render_markdown


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "plan",
        help="show what a budget change does: share deltas, projected impact, approvers",
        description="Compare the config of --head (default: the working tree) with the merge-base of "
        "BASE, simulate both, and say who must approve.",
    )
    p.add_argument("--base", required=True, help="target revision, e.g. origin/main")
    p.add_argument("--head", help="revision to plan (default: the working tree)")
    add_repo_argument(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", type=Path, help="canonical trace to replay under both configs")
    src.add_argument("--scenario", help="built-in workload scenario (default: ai2)")
    p.add_argument("--days", type=float, help="simulated days (default: 30)")
    p.add_argument("--cluster", help="cluster to simulate (default: the largest)")
    p.add_argument("--seed", type=int, default=0, help="simulation seed (default: 0)")
    p.add_argument("--no-simulate", action="store_true", help="skip the projected impact")
    p.add_argument("--cache-dir", type=Path, help="simulation cache (default: REPO/.allot-cache)")
    add_at_argument(p)
    p.add_argument(
        "--approved-by",
        action="append",
        metavar="'NAME <EMAIL>'",
        help="an approval given so far (repeatable); missing approvals then exit 1",
    )
    p.add_argument("--author", action="append", default=[], help="extra author e-mail (repeatable)")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    p.add_argument("--out", type=Path, help="write here instead of stdout")
    p.set_defaults(func=run)


def write_output(text: str, out: Path | None) -> None:
    """Write all or nothing: a half-written plan.md must never be posted."""
    if out is None:
        sys.stdout.write(text)
        return
    out = out.resolve()
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
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
    impact = None
    if not args.no_simulate:
        from allotment.plan.impact import impact_function

        impact = impact_function(
            repo=args.repo,
            trace=args.trace,
            scenario=args.scenario,
            days=args.days,
            seed=args.seed,
            cache_dir=args.cache_dir,
            cluster=args.cluster,
        )
    plan = make_plan(req, impact)
    text = render_json(plan) if args.format == "json" else render_markdown(plan)
    write_output(text, args.out)
    return 1 if plan.violations else 0
