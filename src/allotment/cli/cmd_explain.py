"""``allot explain JOB``: why a job waits or runs at a given moment of a simulated workload.

Replays the workload up to ``--time`` (default: the first scheduling pass after the job was
submitted) and prints the job's place in the pending order with the metrics behind it: its
account's tier and Fair Tree values, its within-team priority signals, and the decision."""

from __future__ import annotations

import argparse
import json
from typing import Any

from allotment.cli.cmd_simulate import (
    AT_HELP,
    add_workload_arguments,
    load_workload,
    parse_overrides,
)
from allotment.cli.common import add_at_argument, add_repo_argument, load_compiled
from allotment.core.context import MODES
from allotment.sim.anchor import DEFAULT_T0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("explain", help="why a job waits or runs (simulated)", description=__doc__)
    p.add_argument("job", help="job id")
    add_repo_argument(p)
    add_at_argument(p, default=DEFAULT_T0, help=AT_HELP)
    add_workload_arguments(p)
    p.add_argument("--policy", choices=MODES, default="budgets")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS", help="moment to explain (seconds from trace start)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from allotment.sim.explain import explain

    overrides = parse_overrides(args.overrides)
    config = load_compiled(args)
    workload, cluster, _ = load_workload(args, config)
    report = explain(config, workload, args.job, cluster=cluster, at=args.time, policy=args.policy, overrides=overrides)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    st = report["account_status"]
    print(f"job {report['job']} of {report['account']} at t={report['time']:.0f}s ({report['policy']}): {report['state']}")
    print(
        f"  account: entitlement {st['entitlement_gpus']:.1f} GPUs, running {st['running_allocated_gpus']} charged GPUs, "
        f"window usage {st['window_usage_gpu_hours']:.1f} GPU-hours; path {' / '.join(st['path'])}"
    )
    for k, v in report.get("decision", {}).items():
        print(f"  {k}: {v}")
    if "reservation" in report:
        print(f"  reservation: {report['reservation']}")
    print("  fair tree (rank: leaf, usage/share per level):")
    for row in report["fair_tree"]:
        print(f"    {row['rank']:>2}: {row['leaf']:<20} {row['level_fair_share']}")
    return 0
