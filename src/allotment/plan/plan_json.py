"""A :class:`Plan` as JSON for machines: the same facts as the comment, every row, with a
``format_version``; the shape is documented in ``schemas/plan-output.json``."""

from __future__ import annotations

import json
from typing import Any

from allotment.plan.model import FORMAT_VERSION, Plan, Side
from allotment.plan.render import marker


def to_json_obj(plan: Plan) -> dict[str, Any]:
    """The same facts for machines; shape documented in ``schemas/plan-output.json``."""

    def side(s: Side) -> dict[str, Any]:
        return {
            "label": s.label,
            "sha": s.sha,
            "inputs_sha256": s.inputs_sha256,
            "committed_unix": s.committed_unix,
        }

    imp = plan.impact
    status = {s.group: s for s in plan.approval_status or ()}
    return {
        "format_version": FORMAT_VERSION,
        "base": side(plan.base),
        "head": side(plan.head),
        "at": plan.at.isoformat(),
        "author": plan.author,
        "headline": plan.headline,
        "marker": marker(plan),
        "diff": {
            "nodes": [
                {
                    "node": c.node,
                    "kind": c.kind,
                    "before": c.before,
                    "after": c.after,
                    "parent_before": c.parent_before,
                    "parent_after": c.parent_after,
                }
                for c in plan.diff.nodes
            ],
            "clusters": [
                {"cluster": c.cluster, "field": c.field, "before": c.before, "after": c.after}
                for c in plan.diff.clusters
            ],
            "policies": [
                {"scope": c.scope, "knob": c.knob, "before": c.before, "after": c.after}
                for c in plan.diff.policies
            ],
        },
        "shares": [
            {
                "leaf": r.leaf,
                "cluster": r.cluster,
                "share_before": r.share_before,
                "share_after": r.share_after,
                "delta_pp": r.delta_pp,
                "gpu_hours_week_before": r.gpu_hours_week_before,
                "gpu_hours_week_after": r.gpu_hours_week_after,
            }
            for r in plan.shares
        ],
        "totals": [
            {
                "leaf": t.leaf,
                "share_before": t.share_before,
                "share_after": t.share_after,
                "delta_pp": t.delta_pp,
                "gpu_hours_week_before": t.gpu_hours_week_before,
                "gpu_hours_week_after": t.gpu_hours_week_after,
            }
            for t in plan.totals
        ],
        "impact": None
        if imp is None
        else {
            "workload": imp.workload,
            "workload_key": imp.workload_key,
            "days": imp.days,
            "seed": imp.seed,
            "flag_threshold": imp.flag_threshold,
            "occupancy_before": imp.occupancy_before,
            "occupancy_after": imp.occupancy_after,
            "debug_p90_wait_before_s": imp.debug_p90_before_s,
            "debug_p90_wait_after_s": imp.debug_p90_after_s,
            "teams": [
                {
                    "team": t.team,
                    "delivered_gpu_hours_week_before": t.delivered_week_before,
                    "delivered_gpu_hours_week_after": t.delivered_week_after,
                    "delivered_over_owed_before": t.ratio_before,
                    "delivered_over_owed_after": t.ratio_after,
                    "p90_wait_before_s": t.p90_wait_before_s,
                    "p90_wait_after_s": t.p90_wait_after_s,
                    "flagged": t.flagged,
                }
                for t in imp.teams
            ],
        },
        "approvals": [
            {
                "node": g.node,
                "owners": list(g.owners),
                "reasons": list(g.reasons),
                "author_is_owner": g.author_is_owner,
                "escalated_from": g.escalated_from,
                "approved_by": None if g not in status else list(status[g].approved_by),
            }
            for g in plan.approvals
        ],
        "violations": list(plan.violations),
    }


def render_json(plan: Plan) -> str:
    return json.dumps(to_json_obj(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
