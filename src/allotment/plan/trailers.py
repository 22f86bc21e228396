"""Approvals recorded in commit messages.

A merge bot (or the person pressing "squash and merge") copies each PR approval into the merge
or squash commit as a git trailer in the message's last paragraph::

    Approved-by: Ada Lovelace <ada@example.org>

Only the last paragraph counts, as with ``git interpret-trailers``: a line quoted in the body of
the description is not an approval.  ``Co-authored-by`` trailers name authors, who can never
approve their own change.
"""

from __future__ import annotations

import re

from allotment.plan.approvals import normalize_email

_TRAILER = re.compile(r"^([A-Za-z0-9-]+)\s*:\s*(.+?)\s*$")


def trailers(message: str) -> list[tuple[str, str]]:
    """(key lower-cased, value) of every trailer in the last paragraph of ``message``."""
    paragraphs = [
        p for p in re.split(r"\n\s*\n", message.strip().replace("\r\n", "\n")) if p.strip()
    ]
    if len(paragraphs) < 2:
        return []  # a subject line alone carries no trailers
    out = []
    for line in paragraphs[-1].splitlines():
        m = _TRAILER.match(line)
        if m:
            out.append((m.group(1).lower(), m.group(2)))
    return out


def approvers(message: str) -> tuple[str, ...]:
    """E-mails from ``Approved-by:`` trailers, sorted and de-duplicated."""
    return tuple(sorted({normalize_email(v) for k, v in trailers(message) if k == "approved-by"}))


def co_authors(message: str) -> tuple[str, ...]:
    return tuple(
        sorted({normalize_email(v) for k, v in trailers(message) if k == "co-authored-by"})
    )
