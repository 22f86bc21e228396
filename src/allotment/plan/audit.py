"""Audit the main branch: was every budget change approved by someone allowed to approve it?

Walks first-parent history (the commits that landed on the branch: merges and squashes, not the
work-in-progress commits of each PR).  For each commit whose config differs from its first
parent, the same diff and approval rules as ``allot plan`` say which owners had to approve;
``Approved-by:`` trailers (see ``trailers``) say who did.  The authors who may not approve are
the commit's author, its ``Co-authored-by`` names and, for a merge commit, every author of the
commits the merge brought in.  Both sides are compiled at the commit's own date, so a budget
that simply expired in between is not mistaken for a change.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import git

from allotment.errors import AllotmentError
from allotment.plan.approvals import ApprovalStatus, check_approvals, required_approvals
from allotment.plan.diff import diff_revisions
from allotment.plan.gitread import resolve
from allotment.plan.revision import CommitCompiler, config_key, has_config
from allotment.plan.trailers import approvers, co_authors


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One commit that changed the config."""

    sha: str
    date: str  # committer date, UTC, ISO 8601
    subject: str
    authors: tuple[str, ...]
    approvers: tuple[str, ...]
    status: tuple[ApprovalStatus, ...]
    problem: str | None = None  # the commit could not be audited (invalid config...)
    bootstrap: bool = False  # first commit with a budget tree: nothing to compare with

    @property
    def ok(self) -> bool:
        return self.problem is None and all(s.satisfied for s in self.status)

    def violations(self) -> list[str]:
        if self.problem:
            return [self.problem]
        out = []
        for s in self.status:
            if not s.satisfied:
                who = ", ".join(s.group.owners) or "nobody (no owners)"
                out.append(
                    f"{s.group.node}: no approval from an owner who is not an author "
                    f"(needs one of {who}; for {'; '.join(s.group.reasons)})"
                )
        return out


@dataclass(frozen=True, slots=True)
class AuditReport:
    branch: str
    head: str
    since: str | None
    entries: tuple[AuditEntry, ...]

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.entries)


def first_parent_commits(repo: git.Repo, rev: str, since: str | None) -> list[git.Commit]:
    """Oldest first; ``since`` excluded (as in ``git log since..rev``)."""
    head = resolve(repo, rev).sha
    spec = f"{resolve(repo, since).sha}..{head}" if since else head
    return list(reversed(list(repo.iter_commits(spec, first_parent=True))))


def _date(c: git.Commit) -> dt.date:
    return dt.datetime.fromtimestamp(c.committed_date, tz=dt.UTC).date()


def _iso(c: git.Commit) -> str:
    return dt.datetime.fromtimestamp(c.committed_date, tz=dt.UTC).isoformat()


def commit_authors(repo: git.Repo, c: git.Commit) -> tuple[str, ...]:
    """Everyone who wrote part of what ``c`` brought onto the branch."""
    people = {str(c.author.email or "").lower()}
    message = str(c.message)
    people.update(co_authors(message))
    if len(c.parents) > 1:
        for p in c.parents[1:]:
            for brought in repo.iter_commits(f"{c.parents[0].hexsha}..{p.hexsha}"):
                people.add(str(brought.author.email or "").lower())
                people.update(co_authors(str(brought.message)))
    return tuple(sorted(people - {""}))


def audit(repo: git.Repo, rev: str = "HEAD", since: str | None = None) -> AuditReport:
    compiler = CommitCompiler(repo)
    entries = []
    for c in first_parent_commits(repo, rev, since):
        if not has_config(repo, c.hexsha):
            continue
        parent = c.parents[0] if c.parents else None
        if parent is not None and config_key(repo, parent.hexsha) == config_key(repo, c.hexsha):
            continue
        entries.append(_audit_commit(repo, compiler, c, parent))
    return AuditReport(rev, resolve(repo, rev).sha, since, tuple(entries))


def _audit_commit(
    repo: git.Repo, compiler: CommitCompiler, c: git.Commit, parent: git.Commit | None
) -> AuditEntry:
    message = str(c.message)
    subject = message.strip().splitlines()[0] if message.strip() else ""
    authors = commit_authors(repo, c)
    given = approvers(message)

    def entry(
        status: tuple[ApprovalStatus, ...] = (), problem: str | None = None, bootstrap: bool = False
    ) -> AuditEntry:
        return AuditEntry(c.hexsha, _iso(c), subject, authors, given, status, problem, bootstrap)

    if parent is None or not has_config(repo, parent.hexsha):
        return entry(bootstrap=True)
    at = _date(c)
    try:
        after = compiler.compile(c.hexsha, at)
    except AllotmentError as exc:
        return entry(problem=f"invalid config: {_first_line(exc)}")
    try:
        before = compiler.compile(parent.hexsha, at)
    except AllotmentError as exc:
        return entry(problem=f"parent has an invalid config, cannot audit: {_first_line(exc)}")
    diff = diff_revisions(before, after, compiler.files(parent.hexsha), compiler.files(c.hexsha))
    groups = required_approvals(before, after, diff, authors)
    return entry(check_approvals(groups, given, authors))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
