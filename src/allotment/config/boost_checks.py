"""Cross-checks on ``policies/boosts.yaml``: a boost names something that exists, was approved by
someone entitled to raise that team's work, and does not outlive a policy maximum.

Why each rule (issue 28, item 4; the Osprey write-up's "manual priority boost with a 1-hour TTL
and a mandatory audit log"):

* **Approver.**  A boost reorders a team's own queue, so it is the team's owners' call (or an
  owner of an ancestor, who funds the team), or the platform team's.  An approver who owns
  nothing of the target would let anyone bump anyone.  A ``user:`` boost raises the user's
  jobs in every team the user belongs to, so the approver must be entitled in each of them.  A
  ``job:`` boost's team is not known from the config (job ids come from the cluster), so only
  an owner of the root (an ancestor of every team) or the platform team may approve one.
* **Expiry.**  A boost is a temporary override; one that runs for years is a silent, permanent
  change of the team's order.  Its expiry may be at most ``boost_max`` (default 7d) after the
  date the config is checked (``--at``, midnight UTC, the same t = 0 a simulated run starts
  at): the day a pull request adds it, that bounds how long it runs.  A check dated before the
  boost was written (simulating an earlier week) sees a longer boost and says so.

Owners and approvers are matched ignoring case, as ``plan.approvals`` matches owners.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from allotment.config.loaded import LoadedNode, LoadedUser, Located
from allotment.config.models.policy import BoostsFile
from allotment.config.sourcemap import SourceMap
from allotment.durations import format_duration, parse_duration
from allotment.errors import Diagnostic

BOOST_MAX_DEFAULT = "7d"
Owners = tuple[Sequence[LoadedNode], Mapping[str, LoadedUser], Sequence[str]]


def check_boosts(
    boosts: BoostsFile,
    smap: SourceMap,
    owners: Owners | None,
    boost_max: str | None,
    at: dt.date | None,
) -> list[Diagnostic]:
    """Every problem of every boost.  ``owners`` (the tree's nodes, its users, the platform
    team) None: the tree is broken, targets and approvers are not judged.  ``at`` None: no date
    to judge expiries from (a caller that only loads), expiries are not judged."""
    diags: list[Diagnostic] = []
    if owners is not None:
        diags += _check_targets(boosts, smap, *owners)
    max_s = parse_duration(boost_max or BOOST_MAX_DEFAULT)
    t0 = None if at is None else dt.datetime.combine(at, dt.time(), tzinfo=dt.UTC)
    for i, b in enumerate(boosts.boosts):
        if t0 is not None and (b.expires - t0).total_seconds() > max_s:
            diags.append(
                Located(smap, ("boosts", i, "expires")).diagnostic(
                    f"boost for {b.target} expires {format_duration((b.expires - t0).total_seconds())} after {at}; at most "
                    f"{format_duration(max_s)} (boost_max in policies/scheduler.yaml)"
                )
            )
    return diags


def _check_targets(
    boosts: BoostsFile,
    smap: SourceMap,
    nodes: Sequence[LoadedNode],
    users: Mapping[str, LoadedUser],
    platform_team: Sequence[str],
) -> list[Diagnostic]:
    """Unknown targets, and approvers not entitled to raise the target's teams."""
    diags: list[Diagnostic] = []
    by_name = {n.name: n for n in nodes}
    leaves = {n.name for n in nodes if n.leaf}
    platform = {o.lower() for o in platform_team}
    root = next((n.name for n in nodes if n.parent is None), None)
    for i, b in enumerate(boosts.boosts):
        kind, _, target = b.target.partition(":")
        where = Located(smap, ("boosts", i, "target"))
        if kind == "account" and target not in leaves:
            diags.append(where.diagnostic(f"boost target: unknown leaf account '{target}'"))
        elif kind == "user" and target not in users:
            diags.append(where.diagnostic(f"boost target: unknown user '{target}'"))
        else:
            teams = _teams(kind, target, users, root)
            problem = _approver_problem(b.approver, kind, target, teams, by_name, platform)
            if problem:
                diags.append(Located(smap, ("boosts", i, "approver")).diagnostic(problem))
    return diags


def _teams(kind: str, target: str, users: Mapping[str, LoadedUser], root: str | None) -> tuple[str, ...]:
    """The teams whose order the boost changes: the account, the user's accounts, or (a job,
    whose team the config cannot know) the root, the one node above every team."""
    if kind == "account":
        return (target,)
    if kind == "user":
        return users[target].accounts
    return (root,) if root is not None else ()


def _approver_problem(
    approver: str,
    kind: str,
    target: str,
    teams: tuple[str, ...],
    by_name: Mapping[str, LoadedNode],
    platform: set[str],
) -> str | None:
    who = approver.lower()
    if who in platform:
        return None
    for team in teams:
        if not any(who in {o.lower() for o in by_name[n].owners} for n in _self_and_ancestors(team, by_name)):
            if kind == "job":
                return (f"boost approver {approver} may not approve a job boost: a job's team is not known "
                        f"from the config, so only an owner of '{team}' (the root) or the platform team may")
            of = f" (a team of user {target})" if kind == "user" else ""
            return (f"boost approver {approver} owns neither '{team}'{of} nor any node above it, "
                    f"and is not on the platform team")
    return None


def _self_and_ancestors(name: str, by_name: Mapping[str, LoadedNode]) -> list[str]:
    out = []
    cur: str | None = name
    while cur is not None and cur in by_name:
        out.append(cur)
        cur = by_name[cur].parent
    return out

