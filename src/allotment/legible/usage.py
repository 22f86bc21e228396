"""``allot usage``: the ledger's GPU-hours per team (leaf account) or user since a time, against
what the team was owed over the same span (entitlement x hours): the numbers behind the report's
usage chart.  Whole ledger hours from the one holding ``now - since`` on (``Ledger.usage``, the
scheduler's window, counts that first hour pro rata instead).  The ledger has no user column; users come from the last observation's jobs, and
hours of jobs no longer observed are shown as such."""

from __future__ import annotations

from dataclasses import dataclass

from allotment.compile.model import CompiledConfig
from allotment.compile.render import to_dict
from allotment.legible.livestate import LiveState, buckets
from allotment.legible.tree import compiled_entitlements

UNKNOWN_USER = "(job no longer observed)"


@dataclass(frozen=True, slots=True)
class UsageRow:
    key: str  # team (leaf account) or user
    gpu_hours: float
    owed_gpu_hours: float | None  # per team only
    hourly: tuple[tuple[int, float], ...]  # (bucket Unix seconds, GPU-hours)


def usage_rows(state: LiveState, config: CompiledConfig, cluster: str, *, since_s: float, by: str) -> list[UsageRow]:
    start = state.now - since_s
    users = {j.id: j.user for j in state.observation.jobs} if state.observation else {}
    per: dict[str, dict[int, float]] = {}
    for b in buckets(state, start):
        key = b.account if by == "team" else users.get(b.job, UNKNOWN_USER)
        series = per.setdefault(key, {})
        series[b.bucket] = series.get(b.bucket, 0.0) + b.gpu_hours
    ent = compiled_entitlements(to_dict(config), cluster)
    if by == "team":
        for leaf in (n.name for n in config.leaves() if n.name in ent):
            per.setdefault(leaf, {})
    rows = []
    for key, series in per.items():
        owed = ent.get(key, 0.0) * since_s / 3600.0 if by == "team" else None
        rows.append(UsageRow(key, sum(series.values()), owed, tuple(sorted(series.items()))))
    rows.sort(key=lambda r: (-r.gpu_hours, r.key))
    return rows
