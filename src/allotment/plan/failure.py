"""What a push that fails validation posts: the errors, in place of the stale plan.

A manager must never read last week's projection under a head that no longer validates, so
``allot plan --out`` writes this comment (same marker, so the commenting job replaces the old
plan with it) and ``--github-annotations`` prints one ``::error file=...,line=...,col=...::``
workflow command per error, which GitHub shows on the lines of the pull request's diff.
"""

from __future__ import annotations

from collections.abc import Sequence

from allotment.errors import Diagnostic
from allotment.plan.escape import code_escape, comment_escape, md_escape
from allotment.plan.model import FORMAT_VERSION

SHOWN = 200  # errors listed in the comment; the rest are counted
LIMIT = 65_536


def failure_marker(head: str) -> str:
    return f"<!-- allotment-plan format={FORMAT_VERSION} invalid head={comment_escape(head)} -->"


def render_failure(diagnostics: Sequence[Diagnostic], head: str) -> str:
    errors = [d for d in diagnostics if d.severity != "warning"]
    lines = [
        failure_marker(head),
        f"### Budget plan: ❌ the change does not validate ({len(errors)} "
        f"error{'s' if len(errors) != 1 else ''}) · no plan until it does",
        "",
        f"Head {md_escape(head)}. Fix these and push again (`allot validate` shows the same "
        "list locally); the previous plan was replaced so that nobody reads a stale projection.",
        "",
    ]
    for d in diagnostics[:SHOWN]:
        lines.append(f"- `{code_escape(d.format())}`")
    if len(diagnostics) > SHOWN:
        lines.append(f"- _… and {len(diagnostics) - SHOWN} more (run `allot validate`)_")
    text = "\n".join(lines) + "\n"
    return text[:LIMIT]


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(diagnostics: Sequence[Diagnostic]) -> str:
    """GitHub workflow commands, escaped as the runner expects (``%``, CR, LF; ``:`` and ``,``
    in properties), so a message from a PR cannot inject a second command."""
    out = []
    for d in diagnostics:
        level = "warning" if d.severity == "warning" else "error"
        props = f"file={_prop(d.file)}"
        if d.line:
            props += f",line={d.line}"
        if d.col:
            props += f",col={d.col}"
        out.append(f"::{level} {props}::{_data(d.message)}")
    return "\n".join(out) + ("\n" if out else "")
