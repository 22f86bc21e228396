"""Who must approve a budget change, and whether the approvals given are enough.

The rule (docs/managers-guide.md, "Who approves"): a change to the split under node N (a
child's share, a child added, removed, moved in or out, renamed, capped, given other clusters
or other dates) needs an approval from an owner of N; a change to N's own owners or members
needs one of N's current owners; a change to any other field of N's file (a description, a
default account) needs N's owners too; every change to an inventory or policy file (capacity,
``health_command``, ``health_file``, ``billing_weight``, any knob, a boost) needs the platform
team, the ``platform_team`` owners listed in ``policies/scheduler.yaml``.  Owners are taken from
the base side: the people who hold the budget today approve moving it.

An author never approves their own change, and is never offered as an approver: groups list
the owners who are not authors.  When every owner of N is an author, the approval escalates to
the owners of N's parent, so that nobody can raise their own budget alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from allotment.compile.model import CompiledConfig
from allotment.plan.diff import StructuralDiff
from allotment.plan.filediff import shown

PLATFORM = "(platform team)"
_EMAIL = re.compile(r"<([^<>\s]+@[^<>\s]+)>\s*$")


@dataclass(frozen=True, slots=True, order=True)
class ApprovalGroup:
    """At least one of ``owners`` must approve, for ``reasons``.  ``owners`` never holds an
    author; empty means nobody can (the change is blocked until someone else owns the node)."""

    node: str
    owners: tuple[str, ...]
    reasons: tuple[str, ...]
    author_is_owner: bool = False
    escalated_from: str | None = None  # the node whose only owner is the author


@dataclass(frozen=True, slots=True)
class ApprovalStatus:
    group: ApprovalGroup
    approved_by: tuple[str, ...]  # valid approvers among those given

    @property
    def satisfied(self) -> bool:
        return bool(self.approved_by)


def normalize_email(text: str) -> str:
    """``Name <a@b.c>`` or ``a@b.c`` -> ``a@b.c`` (lower case), as owners are written."""
    m = _EMAIL.search(text.strip())
    return (m.group(1) if m else text.strip()).lower()


def _owners(config: CompiledConfig, name: str | None) -> tuple[str, ...]:
    if name is None:
        return ()
    try:
        return tuple(sorted({o.lower() for o in config.node(name).owners}))
    except KeyError:
        return ()


def required_approvals(
    base: CompiledConfig, head: CompiledConfig, diff: StructuralDiff, authors: Iterable[str] = ()
) -> tuple[ApprovalGroup, ...]:
    """Approval groups for ``diff``.  ``authors`` (e-mails of everyone who wrote the change)
    cannot approve; a node all of whose owners are authors escalates to its parent."""
    reasons: dict[str, set[str]] = {}

    def need(node: str, why: str) -> None:
        reasons.setdefault(node, set()).add(why)

    for ch in diff.nodes:
        if ch.kind in ("owners", "members"):
            need(ch.node, ch.describe)
            continue
        for parent in {ch.parent_before, ch.parent_after}:
            if parent is not None:
                need(parent, ch.describe)
        if ch.parent_before is None and ch.parent_after is None:
            need(ch.node, ch.describe)
    for c in diff.clusters:
        need(PLATFORM, f"capacity of {c.cluster}")
    for f in shown(diff.fields):
        owner = f.node_file_owner
        if f.platform or owner is None:
            need(PLATFORM, f"{f.field} in {f.file}")
        else:
            need(owner, f"{f.field} of {owner}")
    people = frozenset(normalize_email(a) for a in authors if a)
    groups = []
    for node, why in sorted(reasons.items()):
        groups.append(_group(base, head, node, tuple(sorted(why)), people))
    return tuple(groups)


def _group(
    base: CompiledConfig,
    head: CompiledConfig,
    node: str,
    why: tuple[str, ...],
    authors: frozenset[str],
) -> ApprovalGroup:
    if node == PLATFORM:
        owners = tuple(sorted({o.lower() for o in base.policy.platform_team}))
        return ApprovalGroup(node, _not(owners, authors), why, bool(authors & set(owners)))
    owners = _owners(base, node) or _owners(head, node)
    escalated_from = None
    author_is_owner = bool(authors & set(owners))
    # Climb while no owner but an author is left (or none is listed: as in CODEOWNERS, the
    # nearest owned parent applies): nobody may approve their own budget alone.
    while set(owners) <= authors:
        parent = _parent(base, node) or _parent(head, node)
        up = _owners(base, parent) or _owners(head, parent)
        if parent is None or not up:
            break
        escalated_from = escalated_from or node
        node, owners = parent, up
    return ApprovalGroup(node, _not(owners, authors), why, author_is_owner, escalated_from)


def _not(owners: tuple[str, ...], authors: frozenset[str]) -> tuple[str, ...]:
    """The owners who may approve: never an author."""
    return tuple(o for o in owners if o not in authors)


def _parent(config: CompiledConfig, name: str) -> str | None:
    try:
        return config.node(name).parent
    except KeyError:
        return None


def check_approvals(
    groups: Iterable[ApprovalGroup], approved_by: Iterable[str], authors: Iterable[str] = ()
) -> tuple[ApprovalStatus, ...]:
    """Match the approvers given (``Name <email>`` or e-mails) against each group; an author's
    approval never counts."""
    given = {normalize_email(a) for a in approved_by} - {normalize_email(a) for a in authors}
    return tuple(ApprovalStatus(g, tuple(sorted(given & set(g.owners)))) for g in groups)
