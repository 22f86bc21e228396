"""Policy rules a budget change can break; each broken rule makes ``allot plan`` exit 1.

Only changes this PR makes count: a leaf that was already below the floor and stays there is
not this PR's fault, so it is not reported (``allot validate`` is the place for that).
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


def floor_violations(head: CompiledConfig, rows: tuple[ShareRow, ...]) -> list[str]:
    """Funded leaves whose absolute share on a cluster drops below that cluster's share floor."""
    out = []
    for r in rows:
        floor = head.policy_for(r.cluster).share_floor if r.cluster in head.clusters else 0.0
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
