"""The comment's content as pre-formatted cells: what is certain, then what is estimated.

* **Entitlement** (certain, from the config): shares and *reference* GPU-hours per week summed
  over every cluster (one H100 hour is 1, other types their ``billing_weight``).
* **Projected delivery** (estimated, from simulation): per team its demand, the compiler's
  entitlement, what it was owed and what it was delivered (charged), all in *GPU-hours per week of
  the one simulated cluster's GPUs*, base -> head, the mean over the seeds and the 90% interval
  of the paired change in delivered.
Two units, each named once, never both called "GPU-h/week".

Rows are ordered for a reader in a hurry: teams whose share changed first, then teams whose
projected change is significant; everything else folds into ``<details>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from allotment.durations import format_duration
from allotment.plan.diff import NodeChange
from allotment.plan.escape import code_escape, md_escape
from allotment.plan.filediff import shown
from allotment.plan.model import Impact, Plan, SkippedImpact, TeamImpact
from allotment.plan.shares import changed
from allotment.plan.verdict import own_budget_pct

SUMMARY_ROWS = 60  # per summary table; the rest is counted and folded
DETAIL_ROWS = 300  # per folded table
BULLETS = 40  # per list (approvals, violations, new teams)


@dataclass
class Table:
    """Pre-formatted cells; ``more`` rows were cut (and are counted, never called "none")."""

    title: str
    header: list[str]
    rows: list[list[str]]
    more: int = 0
    note: str = ""

    def cut(self, keep: int) -> None:
        keep = max(0, keep)
        self.more += max(0, len(self.rows) - keep)
        self.rows = self.rows[:keep]


@dataclass
class Bullets:
    items: list[str]
    more: int = 0

    def cut(self, keep: int) -> None:
        keep = max(0, keep)
        self.more += max(0, len(self.items) - keep)
        self.items = self.items[:keep]


@dataclass
class View:
    verdict: str
    sides: str
    entitlement: Table
    entitlement_note: str
    estimate_note: str  # what was simulated, or why not
    estimate: Table | None
    rerun: str
    overall: str
    approvals: Bullets
    violations: Bullets
    new_teams: Bullets
    details: list[Table] = field(default_factory=list)
    cut_note: str = ""
    rule_changes: Bullets = field(default_factory=lambda: Bullets([]))  # apply from the next PR
    kinds: Table | None = None  # p50/p90 wait per job kind, before -> after

    def sections(self) -> list[Table | Bullets]:
        out: list[Table | Bullets] = [*self.details, self.new_teams, self.entitlement]
        if self.estimate is not None:
            out.append(self.estimate)
        if self.kinds is not None:
            out.append(self.kinds)
        return [*out, self.approvals, self.violations]


def capped(t: Table, limit: int) -> Table:
    t.cut(min(len(t.rows), limit))
    return t


def pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def hours(x: float) -> str:
    return f"{x:,.0f}"


def dhours(x: float) -> str:
    return f"{x:+,.0f}"


def wait(s: float | None) -> str:
    if s is None:
        return "n/a"
    return format_duration(round(s / 60) * 60) if s >= 60 else f"{s:.0f}s"


def seeds_text(seeds: tuple[int, ...]) -> str:
    """``1-5`` for a run of seeds, else ``1,3,7``: what ``--seeds`` accepts."""
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


def node_change_cells(c: NodeChange) -> list[str]:
    """A change in words: ``vision renamed to perception``, ``materials added under science``."""
    if c.kind == "added":
        return [c.node, f"added under {c.parent_after or '(root)'}", "", c.after]
    if c.kind == "removed":
        return [c.node, f"removed from {c.parent_before or '(root)'}", c.before, ""]
    if c.kind == "renamed":
        return [c.after, f"renamed from {c.before}", c.before, c.after]
    if c.kind == "moved":
        return [c.node, "moved", c.before, c.after]
    return [c.node, c.kind, c.before, c.after]




def _entitlement(plan: Plan) -> Table:
    movers = sorted(changed(plan.totals), key=lambda t: (t.delta_pp, t.delta_gpu_hours_week, t.leaf))
    rows = [
        [
            t.leaf,
            pct(t.share_before),
            pct(t.share_after),
            f"{t.delta_pp:+.2f}",
            own_budget_pct(t),
            hours(t.gpu_hours_week_before),
            hours(t.gpu_hours_week_after),
            dhours(t.delta_gpu_hours_week),
        ]
        for t in movers
    ]
    header = ["Team", "Share before", "after", "Δ pp", "Δ of own budget",
              "Ref. GPU-h/week before", "after", "Δ"]
    return capped(Table("Entitlement (certain: from the config)", header, rows), SUMMARY_ROWS)


def _estimate_header(cluster: str, waits: bool) -> list[str]:
    head = ["Team", "Demand", "Entitlement", "Owed", "Delivered", "Δ delivered (mean)",
            "90% interval", "Delivered / owed"]
    return head + (["p90 wait before", "after"] if waits else [])


def _arrow(before: float, after: float) -> str:
    return f"{hours(before)} → {hours(after)}"


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def team_cell(t: TeamImpact) -> str:
    """The team's name and, when flagged, the rule that flagged it and its line
    (plan/cut_confirmation.py): "the cut reached its delivery" and "it lost more than the
    threshold of what it got" are different claims behind the same ⚠️."""
    if not t.flagged:
        return t.team
    j = t.judgment
    if j.cut:
        return f"⚠️ {t.team} ({j.rule}: interval below 0)"
    return f"⚠️ {t.team} ({j.rule}: interval below {j.line:+,.0f}, {j.threshold:.0%} of delivered)"


def _estimate_row(t: TeamImpact, waits: bool) -> list[str]:
    cells = [
        team_cell(t),
        _arrow(t.demand_week_before, t.demand_week_after),
        _arrow(t.entitlement_week_before, t.entitlement_week_after),
        _arrow(t.owed_week_before, t.owed_week_after),
        _arrow(t.delivered_week_before, t.delivered_week_after),
        dhours(t.change.mean),
        f"{t.change.low:+,.0f} to {t.change.high:+,.0f}",
        f"{_ratio(t.ratio_before)} → {_ratio(t.ratio_after)}",
    ]
    return cells + ([wait(t.p90_wait_before_s), wait(t.p90_wait_after_s)] if waits else [])


def estimate_tables(plan: Plan, imp: Impact) -> tuple[Table, Table]:
    """(the summary: share movers, then significant teams; every team, folded).  A simulator
    that reports no per-team waits gets no columns of "n/a"."""
    waits = any(t.p90_wait_before_s is not None or t.p90_wait_after_s is not None for t in imp.teams)
    header = _estimate_header(imp.cluster, waits)
    movers = {t.leaf for t in changed(plan.totals)}
    lead = [t for t in imp.teams if t.team in movers]
    sig = [t for t in imp.teams if t.team not in movers and (t.significant or t.flagged)]
    lead.sort(key=lambda t: (t.change.mean, t.team))
    sig.sort(key=lambda t: (t.change.mean, t.team))
    summary = Table("Projected delivery (estimated: simulation)", header,
                    [_estimate_row(t, waits) for t in lead + sig])
    rest = Table("Projected delivery of every team", header,
                 [_estimate_row(t, waits) for t in sorted(imp.teams, key=lambda t: t.team)])
    return capped(summary, SUMMARY_ROWS), capped(rest, DETAIL_ROWS)


def estimate_note(imp: Impact) -> str:
    """Markup: the data parts (cluster, workload) escaped one by one, the emphasis kept."""
    e = md_escape
    days = f"{imp.days:g} day{'' if imp.days == 1 else 's'}"
    runs = f"{len(imp.seeds)} seed{'s' if len(imp.seeds) != 1 else ''} × {days}"
    if imp.warmup_days:
        under = ("under the base config, the head switched in where measuring starts, as when the change "
                 "merges into a running cluster" if imp.warmed_under_base else "each config on its own")
        runs += f" measured after a {imp.warmup_days:g}-day warm-up ({under}; one lookback window, left out)"
    tested = sum(1 for t in imp.teams if t.delivered_week_before > 0)
    cut = sum(1 for t in imp.teams if t.delivered_week_before > 0 and t.entitlement_cut)
    cached = f"; {imp.cached_runs} of {imp.total_runs} runs from the cache" if imp.cached_runs else ""
    note = f" {e(imp.note)}." if imp.note else ""
    return Markup(
        f"Simulated: cluster **{e(imp.cluster)}** only, {e(imp.workload.split(' on ')[0])}, {runs} "
        f"(seeds {seeds_text(imp.seeds)}; a short horizon per seed, `--days` runs longer), "
        f"the same workloads (each team's demand drawn from the base alone) under both "
        f"configs{cached}{_profile_text(imp)}. "
        f"Every figure is in **{e(imp.cluster)} GPU-hours per week**, mean over the seeds: "
        f"demand = the team's budgeted work running or pending; entitlement = `allot compile`'s "
        f"on {e(imp.cluster)}; owed = the entitlement (at most `max_gpus`) on the GPUs in "
        f"service, capped hour by hour at demand; delivered = what ran charged to the team's "
        f"budget. Delivered above owed is borrowed from idle or unallocated GPUs, which a share "
        f"change does not take away. Δ is the mean paired change and its 90% interval (t over "
        f"{len(imp.seeds)} seeds). ⚠️ = Holm's correction keeps the team's drop within its "
        f"family: for the {cut} team{'' if cut == 1 else 's'} whose entitlement the change cuts "
        f"by {imp.flag_threshold:.0%} or more, the whole interval is a drop (the cut reaches "
        f"its delivery); for the other {tested - cut}, a drop of more than "
        f"{imp.flag_threshold:.0%} of what it got (at most a {imp.family_alpha:.0%} chance of any "
        f"false flag among the teams it does not cut)."
        f"{note}"
    )


def _profile_text(imp: Impact) -> str:
    """Which backend delays the simulation added (``allot plan --profile``), when any."""
    if imp.latency_profile == "none":
        return ""
    return f", with the backend latency profile `{code_escape(imp.latency_profile)}` (sim/latency.py)"


def rerun_command(plan: Plan, imp: Impact) -> str:
    base = plan.base.sha[:12] if plan.base.sha else plan.base.label
    head = f" --head {plan.head.sha[:12]}" if plan.head.sha else ""
    workload = imp.workload.split(" on ")[0]
    src = f"--scenario {workload.split(' ', 1)[1]}" if workload.startswith("scenario ") else f"--trace {workload.split(' ', 1)[1]}"
    return (
        f"allot plan --base {base}{head} --at {plan.at.isoformat()} {src} --cluster {imp.cluster} "
        f"--days {imp.days:g} --seeds {seeds_text(imp.seeds)}"
        + (f" --profile {imp.latency_profile}" if imp.latency_profile != "none" else "")
    )


def kind_wait_table(imp: Impact) -> Table | None:
    """p50 and p90 first-start wait of each job kind, before -> after (the policy's kinds,
    docs/metrics.md); none when no simulation reported them."""
    rows = [[k.kind, f"{wait(k.p50_before_s)} → {wait(k.p50_after_s)}",
             f"{wait(k.p90_before_s)} → {wait(k.p90_after_s)}"]
            for k in imp.kind_waits
            if any(x is not None for x in (k.p50_before_s, k.p50_after_s, k.p90_before_s, k.p90_after_s))]
    if not rows:
        return None
    return Table("Wait per job kind (estimated: simulation)", ["Job kind", "p50 wait", "p90 wait"], rows)


def overall_text(imp: Impact) -> str:
    if imp.occupancy_before is None or imp.occupancy_after is None or imp.occupancy_change is None:
        return ""
    ch = imp.occupancy_change
    return (
        f"{imp.cluster} occupancy {pct(imp.occupancy_before)} → {pct(imp.occupancy_after)} "
        f"(Δ {ch.mean * 100:+.2f} pp, 90% interval {ch.low * 100:+.2f} to {ch.high * 100:+.2f} pp)"
        + _capacity_text(imp)
    )


def _capacity_text(imp: Impact) -> str:
    """GPUs in service, charged and unallocated; for a capacity change, how much of it
    unallocated work absorbed (the teams' projections barely move when it took all of it)."""
    c = imp.capacity
    if c is None:
        return ""
    text = (
        f"; GPUs in service {_arrow(c.in_service_before, c.in_service_after)}, charged to budgets "
        f"{_arrow(c.charged_before, c.charged_after)}, unallocated work "
        f"{_arrow(c.unallocated_before, c.unallocated_after)} GPU-h/week"
    )
    share = c.absorbed
    if share is not None:
        d_cap = c.in_service_after - c.in_service_before
        d_free = c.unallocated_after - c.unallocated_before
        text += (
            f"; of the {dhours(d_cap)} GPU-h/week change in service, unallocated work took "
            f"{dhours(d_free)} ({share:.0%}), budgets the rest"
        )
    return text


def detail_tables(plan: Plan) -> list[Table]:
    out = []
    if plan.diff.nodes:
        out.append(Table("Budget tree changes", ["Node", "Change", "Before", "After"],
                         [node_change_cells(c) for c in plan.diff.nodes]))
    fields = shown(plan.diff.fields)
    if fields:
        out.append(Table("Every other field changed (inventory, policies, free text)",
                         ["File", "Field", "Before", "After"],
                         [[f.file, f.field, f.before, f.after] for f in fields]))
    if plan.diff.clusters:
        out.append(Table("Capacity", ["Cluster", "Change", "Before", "After"],
                         [[c.cluster, c.field, c.before, c.after] for c in plan.diff.clusters]))
    out.append(Table(
        "Entitlement per team and cluster (reference GPU-hours per week)",
        ["Team", "Cluster", "Share before", "after", "Δ pp", "before", "after"],
        [[r.leaf, r.cluster, pct(r.share_before), pct(r.share_after), f"{r.delta_pp:+.2f}",
          hours(r.gpu_hours_week_before), hours(r.gpu_hours_week_after)] for r in plan.shares],
    ))
    return [capped(t, DETAIL_ROWS) for t in out]


def skipped_note(plan: Plan) -> str:
    imp = plan.impact
    if isinstance(imp, SkippedImpact):
        return Markup(f"_{md_escape(imp.reason)}._")
    if imp is None:
        return Markup("_Not simulated (`--no-simulate`)._")
    return ""
