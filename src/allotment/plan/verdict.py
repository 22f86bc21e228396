"""The one line a manager reads first: who gains, who loses, and what must happen next.

Modelled on Infracost's "monthly cost will increase by $X": the gains and losses in percentage
points of all capacity and as a percentage of each team's own budget (a -1 pp move is a rounding
error for a big team and half the budget of a small one), then the approval status:
``needs approval from pretrain owners``, ``approved`` or ``blocked by rule share_floor``.

An inventory or policy change gets a headline about the capacity or the knob it changes: the
share shifts such a change causes are its consequence, not its news.
"""

from __future__ import annotations

from allotment.plan.approvals import PLATFORM
from allotment.plan.model import Plan
from allotment.plan.rules import APPROVAL, rule_of
from allotment.plan.shares import LeafTotal, changed

MOVERS = 4  # teams named in the line; the table lists every one


def own_budget_pct(t: LeafTotal) -> str:
    """The change as a percentage of the team's own weekly entitlement before."""
    if t.gpu_hours_week_before <= 0:
        return "new"
    if t.gpu_hours_week_after <= 0:
        return "-100%"
    return f"{t.delta_gpu_hours_week / t.gpu_hours_week_before * 100:+.0f}%"


def _mover(t: LeafTotal) -> str:
    return f"{t.leaf} {t.delta_pp:+.1f} pp ({own_budget_pct(t)} of its budget)"


def movers_text(plan: Plan) -> str:
    moved = list(changed(plan.totals))
    if not moved:
        return ""
    gainers = [t for t in moved if t.delta_pp >= 0]
    losers = [t for t in reversed(moved) if t.delta_pp < 0]  # largest loss first
    n_gain = min(len(gainers), max(MOVERS // 2, MOVERS - len(losers)))
    n_lose = min(len(losers), MOVERS - n_gain)
    parts = []
    if n_gain:
        parts.append("gains: " + ", ".join(_mover(t) for t in gainers[:n_gain]))
    if n_lose:
        parts.append("loses: " + ", ".join(_mover(t) for t in losers[:n_lose]))
    rest = len(moved) - n_gain - n_lose
    return "; ".join(parts) + (f"; and {rest} more teams" if rest else "")


def platform_text(plan: Plan) -> str:
    """Capacity first (GPUs per cluster), then the knobs and inventory fields changed."""
    parts = []
    for c in plan.diff.clusters:
        if c.field == "gpus":
            parts.append(f"capacity of {c.cluster} {int(c.before):,} → {int(c.after):,} GPUs")
        else:
            parts.append(f"cluster {c.cluster} {c.field} ({c.before or c.after})")
    fields = plan.diff.platform_fields
    for f in fields[:3]:
        where = f.file.rsplit("/", 1)[-1].removesuffix(".yaml")
        parts.append(f"{f.field} ({where}) {f.before} → {f.after}")
    if len(fields) > 3:
        parts.append(f"and {len(fields) - 3} more inventory or policy fields")
    return ", ".join(parts)


def approval_text(plan: Plan) -> str:
    rules = sorted({rule_of(v) for v in plan.violations} - {APPROVAL})
    if rules:
        return "blocked by rule " + ", ".join(rules)
    if not plan.approvals:
        return "no approval needed"
    status = plan.approval_status
    if status is not None and all(s.satisfied for s in status):
        return "approved"
    pending = [s.group for s in status if not s.satisfied] if status is not None else plan.approvals
    if any(not g.owners for g in pending):
        g = next(g for g in pending if not g.owners)
        return f"blocked: nobody but the author owns {_who(g.node)}"
    return "needs approval from " + ", ".join(_who(g.node) for g in pending)


def _who(node: str) -> str:
    return "the platform team" if node == PLATFORM else f"{node} owners"


def verdict(plan: Plan) -> str:
    """The comment's first line (and ``verdict`` in the JSON)."""
    news = platform_text(plan) if plan.diff.platform_fields or plan.diff.clusters else ""
    news = news or movers_text(plan)
    if not news:
        news = "no team's entitlement changes" if not plan.diff.empty else "no change"
    return f"{news} · {approval_text(plan)}"
