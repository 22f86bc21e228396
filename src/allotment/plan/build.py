"""``make_plan``: the steps of ``allot plan``, top to bottom.

1. Resolve the revisions; the base side is the merge-base of base and head.
2. Read both sides (head from git objects or the working tree; base always from git objects).
3. Validate and compile the head first (its errors are the PR author's to fix), then the base.
4. Diff, shares, headline; who must approve (authors excluded); which policy rules break,
   judged by the base's rules (a PR's own rule changes apply from the next PR: ``rules``).
5. Optionally simulate the same workloads under both sides (``impact``), only when the change
   can move scheduling (a share, cap, date, inventory or policy change) and the tree is small
   enough to simulate inside the CI job's time (``MAX_SIMULATED_TEAMS``); otherwise the plan
   says why it did not.

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
from allotment.plan.diff import StructuralDiff, diff_revisions
from allotment.plan.gitread import Revision, merge_base, open_repo, read_revision_files, resolve
from allotment.plan.model import Impact, NewTeam, Plan, Side, SkippedImpact
from allotment.plan.revision import compile_files
from allotment.plan.rules import approval_violations, deferred_rule_changes, floor_violations
from allotment.plan.shares import headline, leaf_totals, share_rows
from allotment.plan.trailers import co_authors
from allotment.plan.tree_shares import tree_shares

ImpactFn = Callable[[CompiledConfig, CompiledConfig], Impact]
# Simulated teams at most: a run's cost grows with the number of teams (315 teams: 33.7 s CPU
# per 5-day run, so ~3 min for the default 10 runs on two cores), and the 3,000-team plan of
# issue 14 must fit the CI job's 15 minutes (docs/benchmarks.md).
MAX_SIMULATED_TEAMS = 300


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
    base_files = read_revision_files(repo, base_rev.sha)
    try:
        base_cfg = compile_files(base_files, req.at, base_rev.sha)
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
    diff = diff_revisions(base_cfg, head_cfg, base_files, head_files)
    rows = share_rows(base_cfg, head_cfg, diff.renamed)
    totals = leaf_totals(base_cfg, head_cfg, diff.renamed)
    groups = required_approvals(base_cfg, head_cfg, diff, authors)
    status = None if req.approved_by is None else check_approvals(groups, req.approved_by, authors)
    violations = floor_violations(base_cfg, rows) + (approval_violations(status) if status else [])
    return Plan(
        base=_side(req.base, base_rev, base_cfg),
        head=_side(req.head or "working tree", head_rev, head_cfg),
        at=req.at,
        author=", ".join(authors),
        headline=headline(totals),
        diff=diff,
        shares=rows,
        totals=totals,
        impact=_estimate(impact, diff, base_cfg, head_cfg),
        approvals=groups,
        approval_status=status,
        violations=tuple(violations),
        new_teams=_new_teams(head_cfg, diff),
        trees=tree_shares(base_cfg, head_cfg, diff.renamed),
        rule_changes=tuple(deferred_rule_changes(base_cfg, head_cfg)),
    )


def _new_teams(head: CompiledConfig, diff: StructuralDiff) -> tuple[NewTeam, ...]:
    out = []
    for c in diff.nodes:
        if c.kind != "added":
            continue
        n = head.node(c.node)
        pct = f"{n.share:.1%}" if n.share >= 0.01 else f"{n.share:.2%}"
        share = f"{n.weight:g} ({pct} of {n.parent})" if n.parent else f"{n.weight:g}"
        out.append(NewTeam(n.name, n.parent, tuple(sorted(n.owners)), tuple(sorted(n.members)), share))
    return tuple(out)


def _estimate(
    impact: ImpactFn | None, diff: StructuralDiff, base: CompiledConfig, head: CompiledConfig
) -> Impact | SkippedImpact | None:
    if impact is None:
        return None
    if not diff.changes_scheduling:
        return SkippedImpact(
            "not simulated: no share, cap, date, inventory or policy changes, so scheduling "
            "cannot change"
        )
    teams = max(len(base.leaves()), len(head.leaves()))
    if teams > MAX_SIMULATED_TEAMS:
        return SkippedImpact(
            f"not simulated: {teams:,} teams is more than the {MAX_SIMULATED_TEAMS} a plan "
            "simulates inside the CI job's time; run `allot simulate` on each side to estimate"
        )
    return impact(base, head)


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
