"""``allot compile``: the budget tree with normalized shares and entitlements, as a table, as
JSON, or (``--target slurm|kai|kueue``) as the Slurm commands or Kubernetes manifests
that carry it."""

from __future__ import annotations

import argparse
import sys

from allotment.backends.kubernetes.render import render_kai, render_kueue
from allotment.backends.slurm.render import render_slurm
from allotment.cli.common import add_at_argument, add_repo_argument, load_compiled
from allotment.compile.render import to_json, to_table


def register(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p)
    add_at_argument(p)
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    p.add_argument(
        "--target",
        choices=("shares", "slurm", "kai", "kueue"),
        default="shares",
        help="shares (default); slurm: sacctmgr commands and slurm.conf lines; "
        "kai / kueue: Kubernetes manifests (KAI-Scheduler queues, Kueue cohorts)",
    )
    p.add_argument("--cluster", default=None, help="with --target slurm|kai|kueue: which cluster")
    p.add_argument("--revision", default=None, help="git revision to record in the output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = load_compiled(args, revision=args.revision)
    if args.target == "slurm":
        out = render_slurm(config, args.cluster)
    elif args.target == "kai":
        out = render_kai(config, args.cluster)
    elif args.target == "kueue":
        out = render_kueue(config, args.cluster)
    else:
        out = to_json(config) if args.format == "json" else to_table(config)
    sys.stdout.write(out)
    return 0
