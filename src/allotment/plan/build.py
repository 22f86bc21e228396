"""``make_plan``: the steps of ``allot plan``, top to bottom.

1. Resolve the revisions; the base side is the merge-base of base and head.
2. Read both sides (head from git objects or the working tree; base always from git objects).
3. Validate and compile the head first (its errors are the PR author's to fix), then the base.
4. Diff, shares, headline; who must approve (authors excluded); which policy rules break.
5. Optionally simulate the same workload under both sides (``impact``).

Nothing here writes to the repository; the only write anywhere in a plan is the simulation
cache, under the cache folder.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git

from allotment.compile.model import CompiledConfig
from allotment.config.files import read_repo_files
from allotment.errors import AllotmentError, CompileError, ConfigError, Diagnostic
from allotment.plan.approvals import check_approvals, normalize_email, required_approvals
from allotment.plan.diff import diff_configs
from allotment.plan.gitread import Revision, merge_base, open_repo, read_revision_files, resolve
from allotment.plan.model import Impact, Plan, Side
from allotment.plan.revision import compile_files
from allotment.plan.rules import approval_violations, floor_violations
from allotment.plan.shares import headline, leaf_totals, share_rows
from allotment.plan.trailers import co_authors

ImpactFn = Callable[[CompiledConfig, CompiledConfig], Impact]


@dataclass(frozen=True, slots=True)
class PlanRequest:
    repo: Path
    base: str
    head: str | None  # None: the working tree
    at: dt.date
    approved_by: tuple[str, ...] | None = None  # None: do not check approvals
    authors: tuple[str, ...] = ()  # extra authors (e.g. the PR author) on top of git's


def make_plan(req: PlanRequest, impact: ImpactFn | None = None) -> Plan:
    with open_repo(req.repo) as repo:
        return _make_plan(repo, req, impact)


def _make_plan(repo: git.Repo, req: PlanRequest, impact: ImpactFn | None) -> Plan:
    head_rev = resolve(repo, req.head) if req.head is not None else None
    base_rev = merge_base(repo, req.base, head_rev.sha if head_rev else "HEAD")

    if head_rev is not None:
        head_files = read_revision_files(repo, head_rev.sha)
    else:
        if repo.working_tree_dir is None:
            raise CompileError("a bare repository has no working tree; pass --head")
        head_files = read_repo_files(Path(repo.working_tree_dir))
    head_cfg = compile_files(head_files, req.at, head_rev.sha if head_rev else None)
    try:
        base_cfg = compile_files(read_revision_files(repo, base_rev.sha), req.at, base_rev.sha)
    except ConfigError as exc:
        raise ConfigError(
            [
                Diagnostic(
                    d.file, d.line, d.col, f"(in base {base_rev.sha[:12]}) {d.message}", d.severity
                )
                for d in exc.diagnostics
            ]
        ) from exc
    except AllotmentError as exc:
        raise CompileError(f"base {base_rev.sha[:12]} does not compile: {exc}") from exc

    authors = sorted(
        {normalize_email(a) for a in req.authors}
        | set(_branch_authors(repo, base_rev.sha, head_rev.sha if head_rev else "HEAD"))
    )
    diff = diff_configs(base_cfg, head_cfg)
    rows = share_rows(base_cfg, head_cfg, diff.renamed)
    totals = leaf_totals(base_cfg, head_cfg, diff.renamed)
    groups = required_approvals(base_cfg, head_cfg, diff, authors)
    status = None if req.approved_by is None else check_approvals(groups, req.approved_by, authors)
    violations = floor_violations(head_cfg, rows) + (approval_violations(status) if status else [])
    return Plan(
        base=_side(req.base, base_rev, base_cfg),
        head=_side(req.head or "working tree", head_rev, head_cfg),
        at=req.at,
        author=", ".join(authors),
        headline=headline(totals),
        diff=diff,
        shares=rows,
        totals=totals,
        impact=impact(base_cfg, head_cfg) if impact is not None else None,
        approvals=groups,
        approval_status=status,
        violations=tuple(violations),
    )


def _side(label: str, rev: Revision | None, cfg: CompiledConfig) -> Side:
    if rev is None:
        return Side(label, None, cfg.inputs_sha256, None)
    return Side(label, rev.sha, cfg.inputs_sha256, rev.committed_unix)


def _branch_authors(repo: git.Repo, base_sha: str, head: str) -> list[str]:
    """Authors and co-authors of every commit the PR adds on top of the merge-base."""
    people: set[str] = set()
    for c in repo.iter_commits(f"{base_sha}..{head}"):
        people.add(str(c.author.email or "").lower())
        people.update(co_authors(str(c.message)))
    return sorted(people - {""})
