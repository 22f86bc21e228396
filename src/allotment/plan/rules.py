"""Policy rules a budget change can break; each broken rule makes ``allot plan`` exit 1.

Only changes this PR makes count: a leaf that was already below the floor and stays there is
not this PR's fault, so it is not reported (``allot validate`` is the place for that).

Every knob that judges a pull request (:data:`JUDGING_KNOBS`) is read from the **base**: a PR
that adds a team below the floor and sets ``share_floor: 0`` in the same commit is still
blocked, and a PR cannot raise or silence its own impact warnings.  A change to such a knob is
listed by :func:`deferred_rule_changes` and judges the next pull request, once this one merges.
"""

from __future__ import annotations

from allotment.compile.model import CompiledConfig
from allotment.plan.approvals import ApprovalStatus
from allotment.plan.shares import ShareRow

# rule names: each violation starts with "<rule>: " (the verdict line names the rule)
FLOOR = "share_floor"
APPROVAL = "approval"


def rule_of(violation: str) -> str:
    return violation.split(":", 1)[0]


# Policy fields that decide a plan's verdict or warnings: read from the base side only.
# (plan_seeds, plan_workload and platform_team are read from the base where they are used:
# impact, impact's history, approvals.)
JUDGING_KNOBS = ("share_floor", "flag_delivered_drop", "plan_seeds", "plan_workload", "platform_team")


def floor_violations(base: CompiledConfig, rows: tuple[ShareRow, ...]) -> list[str]:
    """Funded leaves whose absolute share on a cluster drops below that cluster's share floor,
    the floor as the base revision sets it (a cluster new in this PR gets the base's global one)."""
    out = []
    for r in rows:
        floor = base.policy_for(r.cluster).share_floor
        if floor <= 0 or r.share_after <= 0:
            continue
        if r.share_after + 1e-12 < floor and r.share_after < r.share_before - 1e-12:
            out.append(
                f"{FLOOR}: {r.leaf} on {r.cluster}: share drops to {r.share_after:.2%}, "
                f"below the floor of {floor:.2%}"
            )
        elif r.share_after + 1e-12 < floor and r.share_before == 0:
            out.append(
                f"{FLOOR}: {r.leaf} on {r.cluster}: new share {r.share_after:.2%} is below the floor of {floor:.2%}"
            )
    return out


def approval_violations(status: tuple[ApprovalStatus, ...]) -> list[str]:
    out = []
    for s in status:
        if not s.satisfied:
            who = ", ".join(s.group.owners) or "nobody (no owners listed)"
            out.append(f"{APPROVAL}: missing approval for {s.group.node} from one of: {who}")
    return out


def deferred_rule_changes(base: CompiledConfig, head: CompiledConfig) -> list[str]:
    """Judging knobs this PR changes, in words: they are shown and need the platform team like any
    policy change, but this PR is judged by the base's values; the new ones judge the next PR."""
    scopes = [("", base.policy, head.policy)] + [
        (f" on {c}", base.policy_for(c), head.policy_for(c))
        for c in sorted(set(base.clusters) | set(head.clusters))
    ]
    out = []
    for knob in JUDGING_KNOBS:
        seen = set()
        for where, b, h in scopes:
            before, after = getattr(b, knob), getattr(h, knob)
            if before == after or (where and (before, after) in seen):
                continue
            seen.add((before, after))
            out.append(
                f"{knob}{where}: {_knob(before)} → {_knob(after)}; this pull request is judged "
                f"by {_knob(before)}, the new value applies from the next one"
            )
    return out


def _knob(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    return f"{value:g}" if isinstance(value, float) else str(value)
