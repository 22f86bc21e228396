"""`allot history NODE`: the timeline of one node's share and owners, from git history."""

from __future__ import annotations

import argparse
import json

from allotment.cli.cmd_plan import write_output
from allotment.cli.common import add_repo_argument
from allotment.plan.gitread import open_repo
from allotment.plan.history import HistoryEvent, history


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Every first-parent commit that changed NODE's share or owners: date, "
        "commit, author, approvers, before -> after.  Follows renames."
    )
    p.add_argument("node", help="budget node name (as it is named at --rev)")
    add_repo_argument(p)
    p.add_argument("--rev", default="HEAD", help="branch to read (default: HEAD)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run)


def to_text(events: tuple[HistoryEvent, ...]) -> str:
    lines = []
    for e in events:
        approved = ", ".join(e.approvers) or "-"
        change = f"{e.before or '-'} -> {e.after or '-'}"
        lines.append(
            f"{e.date}  {e.sha[:12]}  {e.name}  {e.what}: {change}  "
            f"by {e.author or '-'}  approved by {approved}"
        )
    return "\n".join(lines) + "\n"


def to_json(events: tuple[HistoryEvent, ...]) -> str:
    return (
        json.dumps(
            {
                "format_version": 1,
                "events": [
                    {
                        "date": e.date,
                        "sha": e.sha,
                        "author": e.author,
                        "approvers": list(e.approvers),
                        "name": e.name,
                        "change": e.what,
                        "before": e.before,
                        "after": e.after,
                    }
                    for e in events
                ],
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )


def run(args: argparse.Namespace) -> int:
    with open_repo(args.repo) as repo:
        events = history(repo, args.node, args.rev)
    write_output(to_json(events) if args.format == "json" else to_text(events), None)
    return 0
