"""A :class:`Plan` as JSON for machines: the same facts as the comment, every row, with a
``format_version``; the shape is documented in ``schemas/plan-output.json``."""

from __future__ import annotations

import json
from typing import Any

from allotment.plan.model import (
    FORMAT_VERSION,
    Capacity,
    Impact,
    Plan,
    Side,
    SkippedImpact,
    TeamImpact,
)
from allotment.plan.render import marker
from allotment.plan.stats import CONFIDENCE, Interval
from allotment.plan.verdict import verdict


def to_json_obj(plan: Plan) -> dict[str, Any]:
    """The same facts for machines; shape documented in ``schemas/plan-output.json``."""

    def side(s: Side) -> dict[str, Any]:
        return {
            "label": s.label,
            "sha": s.sha,
            "inputs_sha256": s.inputs_sha256,
            "committed_unix": s.committed_unix,
        }

    status = {s.group: s for s in plan.approval_status or ()}
    return {
        "format_version": FORMAT_VERSION,
        "base": side(plan.base),
        "head": side(plan.head),
        "at": plan.at.isoformat(),
        "author": plan.author,
        "headline": plan.headline,
        "verdict": verdict(plan),
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
            "fields": [
                {"file": f.file, "kind": f.kind, "field": f.field, "before": f.before, "after": f.after}
                for f in plan.diff.fields
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
        "impact": _impact(plan.impact),
        "seeds": list(plan.impact.seeds) if isinstance(plan.impact, Impact) else [],
        "new_teams": [
            {"name": t.name, "parent": t.parent, "owners": list(t.owners), "members": list(t.members), "share": t.share}
            for t in plan.new_teams
        ],
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
        "rule_changes": list(plan.rule_changes),
    }


def _interval(i: Interval) -> dict[str, Any]:
    return {"mean": i.mean, "low": i.low, "high": i.high}


def _team(t: TeamImpact) -> dict[str, Any]:
    return {
        "team": t.team,
        "delivered_gpu_hours_week_before": t.delivered_week_before,
        "delivered_gpu_hours_week_after": t.delivered_week_after,
        "impact": {**_interval(t.change), "flagged": t.flagged},
        "delivered_over_owed_before": t.ratio_before,
        "delivered_over_owed_after": t.ratio_after,
        "p90_wait_before_s": t.p90_wait_before_s,
        "p90_wait_after_s": t.p90_wait_after_s,
        "demand_gpu_hours_week_before": t.demand_week_before,
        "demand_gpu_hours_week_after": t.demand_week_after,
        "owed_gpu_hours_week_before": t.owed_week_before,
        "owed_gpu_hours_week_after": t.owed_week_after,
        "entitlement_gpu_hours_week_before": t.entitlement_week_before,
        "entitlement_gpu_hours_week_after": t.entitlement_week_after,
        "p_value": t.p_value,
        "judged_by": t.judgment.rule,
        "judgment": {
            "rule": t.judgment.rule,
            "threshold": t.judgment.threshold,
            "line_gpu_hours_week": t.judgment.line,
            "confidence": CONFIDENCE,
            "interval": _interval(t.change),
            "flagged": t.flagged,
        },
    }


def _capacity(c: Capacity | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "in_service_gpu_hours_week_before": c.in_service_before,
        "in_service_gpu_hours_week_after": c.in_service_after,
        "charged_gpu_hours_week_before": c.charged_before,
        "charged_gpu_hours_week_after": c.charged_after,
        "unallocated_gpu_hours_week_before": c.unallocated_before,
        "unallocated_gpu_hours_week_after": c.unallocated_after,
        "in_service_change": _interval(c.in_service_change),
        "unallocated_change": _interval(c.unallocated_change),
        "absorbed_by_unallocated": c.absorbed,
    }


def _impact(imp: Impact | SkippedImpact | None) -> dict[str, Any] | None:
    if imp is None:
        return None
    if isinstance(imp, SkippedImpact):
        return {"skipped": imp.reason}
    return {
        "workload": imp.workload,
        "workload_key": imp.workload_key,
        "latency_profile": imp.latency_profile,
        "cluster": imp.cluster,
        "days": imp.days,
        "warmup_days": imp.warmup_days,
        "warmed_under_base": imp.warmed_under_base,
        "unit": f"{imp.cluster} GPU-hours per week",
        "family_alpha": imp.family_alpha,
        "capacity": _capacity(imp.capacity),
        "seeds": list(imp.seeds),
        "confidence": CONFIDENCE,
        "flag_threshold": imp.flag_threshold,
        "occupancy_before": imp.occupancy_before,
        "occupancy_after": imp.occupancy_after,
        "occupancy_change": None if imp.occupancy_change is None else _interval(imp.occupancy_change),
        "cached_runs": imp.cached_runs,
        "total_runs": imp.total_runs,
        "note": imp.note,
        "teams": [_team(t) for t in imp.teams],
        "kind_waits": [
            {"kind": k.kind, "p50_wait_before_s": k.p50_before_s, "p50_wait_after_s": k.p50_after_s,
             "p90_wait_before_s": k.p90_before_s, "p90_wait_after_s": k.p90_after_s}
            for k in imp.kind_waits
        ],
    }


def render_json(plan: Plan) -> str:
    return json.dumps(to_json_obj(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
