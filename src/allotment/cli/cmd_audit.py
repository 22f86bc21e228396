"""`allot audit`: was every budget change on the branch approved by a non-author owner?

Exit 0 when every config-changing first-parent commit carries the approvals it needed
(``Approved-by:`` trailers), 1 when any does not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json

from allotment.cli.cmd_plan import write_output
from allotment.cli.common import add_repo_argument
from allotment.plan.audit import AuditReport, audit
from allotment.plan.gitread import open_repo


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Walk first-parent history and check Approved-by trailers against the "
        "owners each change needed."
    )
    add_repo_argument(p)
    p.add_argument("--rev", default="HEAD", help="branch to audit (default: HEAD)")
    p.add_argument("--since", help="only commits after this revision")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run)


def to_json(report: AuditReport) -> str:
    obj = {
        "format_version": 1,
        "branch": report.branch,
        "head": report.head,
        "since": report.since,
        "ok": report.ok,
        "commits": [
            {
                "sha": e.sha,
                "date": e.date,
                "subject": e.subject,
                "authors": list(e.authors),
                "approvers": list(e.approvers),
                "bootstrap": e.bootstrap,
                "ok": e.ok,
                "required": [
                    {
                        "node": s.group.node,
                        "owners": list(s.group.owners),
                        "reasons": list(s.group.reasons),
                        "approved_by": list(s.approved_by),
                    }
                    for s in e.status
                ],
                "violations": e.violations(),
            }
            for e in report.entries
        ],
    }
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def to_text(report: AuditReport) -> str:
    lines = []
    for e in report.entries:
        mark = "ok  " if e.ok else "FAIL"
        note = " (first budget tree: nothing to compare)" if e.bootstrap else ""
        lines.append(f"{mark} {e.sha[:12]} {e.date[:10]} {e.subject}{note}")
        for v in e.violations():
            lines.append(f"     - {v}")
    bad = sum(not e.ok for e in report.entries)
    lines.append(
        f"{len(report.entries)} config-changing commits audited on {report.branch}; "
        f"{bad} without the approvals they needed"
    )
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    with open_repo(args.repo) as repo:
        report = audit(repo, args.rev, args.since)
    write_output(to_json(report) if args.format == "json" else to_text(report), None)
    return 0 if report.ok else 1
