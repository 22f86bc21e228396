"""The one line a manager reads first: who gains, who loses, and what must happen next.

Modelled on Infracost's "monthly cost will increase by $X": the gains and losses in percentage
points of all capacity and as a percentage of each team's own budget (a -1 pp move is a rounding
error for a big team and half the budget of a small one), then the approval status:
``needs approval from pretrain owners``, ``approved`` or ``blocked by rule share_floor``.

The largest move leads (gains or losses, whichever side holds it), because it is what the
reviewer must weigh; a new team reads ``(new team)`` and a removed one ``(removed)``, never a
percentage of a budget it did not have.  Renames and moves of nodes are said in words after the
share moves (a rename moves nothing; a move usually moves a share, shown with the movers).

An inventory or policy change gets a headline about the capacity or the knob it changes: the
share shifts such a change causes are its consequence, not its news.  When the same pull request
also edits the budget tree, the tree's share moves still lead: a renamed boost must not hide a
+43% move of a team's budget (issue 26).
"""

from __future__ import annotations

from allotment.plan.approvals import PLATFORM
from allotment.plan.diff import SCHEDULING_KINDS
from allotment.plan.model import Plan
from allotment.plan.rules import APPROVAL, rule_of
from allotment.plan.shares import LeafTotal, changed

MOVERS = 4  # teams named in the line; the table lists every one
STRUCTURE = 3  # renames and moves named in the line


def own_budget_pct(t: LeafTotal) -> str:
    """The change as a percentage of the team's own weekly entitlement before (a cell of the
    entitlement table): ``new`` for a team that had none, ``-100%`` for one that has none left."""
    if t.gpu_hours_week_before <= 0:
        return "new"
    if t.gpu_hours_week_after <= 0:
        return "-100%"
    return f"{t.delta_gpu_hours_week / t.gpu_hours_week_before * 100:+.0f}%"


def _mover(t: LeafTotal) -> str:
    if t.gpu_hours_week_before <= 0:
        return f"{t.leaf} {t.delta_pp:+.1f} pp (new team)"
    if t.gpu_hours_week_after <= 0:
        return f"{t.leaf} {t.delta_pp:+.1f} pp (removed: all of its budget)"
    return f"{t.leaf} {t.delta_pp:+.1f} pp ({own_budget_pct(t)} of its budget)"


def _size(t: LeafTotal) -> tuple[float, float, bool, str]:
    """Largest move first: percentage points, then hours (rounded, so that the two ends of a
    move of N points tie), then a gain before a loss, then name (a stable tie-break)."""
    return (-round(abs(t.delta_pp), 6), -round(abs(t.delta_gpu_hours_week), 3), t.delta_pp < 0, t.leaf)


def movers_text(plan: Plan) -> str:
    """``loses: a -9.0 pp (-43% of its budget), ...; gains: ...``: the side holding the
    largest move first, each side largest first, at most ``MOVERS`` names."""
    moved = sorted(changed(plan.totals), key=_size)
    if not moved:
        return ""
    gainers = [t for t in moved if t.delta_pp >= 0]
    losers = [t for t in moved if t.delta_pp < 0]
    n_gain = min(len(gainers), max(MOVERS // 2, MOVERS - len(losers)))
    n_lose = min(len(losers), MOVERS - n_gain)
    sides = [("gains", gainers[:n_gain]), ("loses", losers[:n_lose])]
    if moved[0].delta_pp < 0:
        sides.reverse()
    parts = [f"{word}: " + ", ".join(_mover(t) for t in ts) for word, ts in sides if ts]
    rest = len(moved) - n_gain - n_lose
    return "; ".join(parts) + (f"; and {rest} more teams" if rest else "")


def structure_text(plan: Plan) -> str:
    """Renames and moves in words: ``vision renamed to perception, nlp moved from ml to
    science``.  Additions and removals are in the movers already (``new team``, ``removed``)."""
    said = [c.describe for kind in ("renamed", "moved") for c in plan.diff.nodes if c.kind == kind]
    more = len(said) - STRUCTURE
    return ", ".join(said[:STRUCTURE]) + (f", and {more} more renamed or moved" if more > 0 else "")


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
        if g.node == PLATFORM:
            if g.author_is_owner:
                return "blocked: everyone in the platform team is an author of this change"
            return "blocked: no platform team is listed (platform_team in policies/scheduler.yaml)"
        if g.author_is_owner:
            return f"blocked: every owner of {g.node} is an author of this change"
        return f"blocked: {g.node} has no owners listed"
    return "needs approval from " + ", ".join(_who(g.node) for g in pending)


def _who(node: str) -> str:
    return "the platform team" if node == PLATFORM else f"{node} owners"


def verdict(plan: Plan) -> str:
    """The comment's first line (and ``verdict`` in the JSON)."""
    platform = platform_text(plan) if plan.diff.platform_fields or plan.diff.clusters else ""
    tree = any(c.kind in SCHEDULING_KINDS or c.kind == "renamed" for c in plan.diff.nodes)
    parts = [movers_text(plan), structure_text(plan), platform] if tree or not platform else [
        platform, structure_text(plan)]
    news = "; ".join(p for p in parts if p)
    if not news:
        news = "no team's entitlement changes" if not plan.diff.empty else "no change"
    return f"{news} · {approval_text(plan)}"
