"""``allot report``: one self-contained HTML file of a saved run (and a baseline beside it).

Python computes every shape (``timeline``, ``charts``); the template (``templates/report.html.j2``)
only lays them out, so the file has no script and fetches nothing."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from allotment.errors import UsageError
from allotment.legible.charts import Panel, cdf_panel, icicle, usage_panel
from allotment.legible.colors import node_colors, team_colors
from allotment.legible.replay import Interval, intervals
from allotment.legible.rundir import RunDir, read_run_folded
from allotment.legible.runview import window_s
from allotment.legible.timeline import Timeline, build_timeline
from allotment.legible.tree import compiled_parents, program_of
from allotment.legible.words import duration, percent
from allotment.sim.event_file import read_events
from allotment.sim.events import RunHeader, first_waits_by_kind
from allotment.sim.job_kind import JOB_KINDS


@dataclass(frozen=True, slots=True)
class Legend:
    team: str
    program: str
    color: str


def _nodes(run: RunDir) -> tuple[list[str], dict[str, int]]:
    cl = run.compiled.get("clusters", {}).get(run.cluster, {})
    names: list[str] = []
    per: dict[str, int] = {}
    for g in cl.get("node_groups", []):
        first, count = str(g["first"]), int(g["count"])
        stem = first.rstrip("0123456789")
        width, start = len(first) - len(stem), int(first[len(stem):] or 0)
        for i in range(count):
            n = f"{stem}{start + i:0{width}d}"
            names.append(n)
            per[n] = int(g["gpus_per_node"])
    return names, per


def _timeline(run: RunDir, teams: list[str], ivs: list[Interval] | None) -> Timeline:
    names, per = _nodes(run)
    return build_timeline(intervals(run.events, run.end) if ivs is None else ivs, names, per, teams, run.end)


def read_for_report(path: Path) -> tuple[RunDir, list[Interval]]:
    """The run and its intervals, the event log streamed rather than held (``read_run_folded``):
    a run's intervals end no later than ``RunDir.end``, so folding the whole log is
    ``intervals(run.events, run.end)``."""
    return read_run_folded(path, lambda events: intervals(events, math.inf))


def waits_by_kind(run: RunDir) -> dict[str, list[float]]:
    """Every job's first-start wait per job kind, replayed from the run's event log through the
    simulator's own metrics (``sim.events.first_waits_by_kind``): the kind is the policy's, as
    the log's submit events record it, and the waits are the lists behind ``metrics.json``."""
    path = run.path / "events.jsonl"
    try:
        with path.open(encoding="utf-8") as f:
            header = RunHeader.from_json(json.loads(f.readline()))
        return first_waits_by_kind(header, read_events(path))
    except (ValueError, KeyError, TypeError) as exc:  # the run was read with every line checked but the header
        raise UsageError(f"{path}: {exc}") from None


def _usage_series(run: RunDir, leaf: str) -> list[tuple[float, float]]:
    out = []
    for s in run.fairshare:
        x = s.leaf(leaf)
        if x is not None:
            out.append((s.t, x.usage_gpu_hours))
    return out


def _summary(run: RunDir) -> dict[str, str]:
    m = run.metrics
    w = m.get("wait", {})
    row = {
        "policy": str(m.get("policy", run.meta.get("policy", ""))),
        "occupancy": percent(m.get("occupancy")),
        "delivered / owed": percent(m.get("delivered_over_owed")),
        "unallocated share": percent(m.get("unallocated_fraction")),
        "preemptions": str(m.get("preemptions", "-")),
    }
    for k in ("all", *JOB_KINDS):
        if k in w:
            row[f"wait p50 / p90 ({k})"] = f"{duration(float(w[k]['p50']))} / {duration(float(w[k]['p90']))}"
    return row


def report_context(
    run: RunDir, base: RunDir | None, ivs: list[Interval] | None = None, base_ivs: list[Interval] | None = None
) -> dict[str, Any]:
    """``ivs``/``base_ivs``: the runs' intervals when their events were streamed, not kept."""
    parents = compiled_parents(run.compiled)
    snap = run.fairshare[-1] if run.fairshare else None
    shares = {n.node: n.share for n in snap.nodes} if snap else {}
    tree_parents = {n: p for n, p in parents.items() if n in shares}
    leaves = sorted(x.leaf for x in snap.leaves) if snap else []
    colors = team_colors(leaves, parents)
    legend = [Legend(t, program_of(parents, t), colors[t]) for t in sorted(leaves, key=lambda t: (program_of(parents, t), t))]
    teams = [x.team for x in legend]
    win_h = window_s(run.compiled, run.cluster) / 3600.0
    panels: list[Panel] = []
    teams_m = run.metrics.get("teams", {})
    for i, leaf in enumerate(teams):
        share = snap.leaf(leaf) if snap else None
        ent = share.entitlement_gpus if share is not None else 0.0
        ratio = teams_m.get(leaf, {}).get("ratio")
        sub = f"entitled {ent:.1f} GPUs; delivered {percent(ratio)} of owed"
        panels.append(usage_panel(leaf, f"s{i}", _usage_series(run, leaf), ent * win_h, run.end,
                                  _usage_series(base, leaf) if base else None, sub))
    new_w, base_w = waits_by_kind(run), waits_by_kind(base) if base else {}
    cdfs = [cdf_panel(k, new_w[k], base_w.get(k) if base else None) for k in JOB_KINDS if new_w[k] or base_w.get(k)]
    cells, tree_h = icicle(tree_parents, shares, node_colors(parents, leaves))
    return {
        "meta": run.meta, "base_meta": base.meta if base else None,
        "summary": [_summary(run)] + ([_summary(base)] if base else []),
        "legend": legend,
        "timelines": [("new policy: " + str(run.meta.get("policy", "")), _timeline(run, teams, ivs))]
        + ([("baseline: " + str(base.meta.get("policy", "")), _timeline(base, teams, base_ivs))] if base else []),
        "panels": panels, "cdfs": cdfs, "cells": cells, "tree_h": tree_h,
        "window": f"{win_h / 24:g}-day" if win_h % 24 == 0 else duration(win_h * 3600),
    }


def render_report(
    run: RunDir, base: RunDir | None = None, ivs: list[Interval] | None = None, base_ivs: list[Interval] | None = None
) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("allotment", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
    )
    return env.get_template("report.html.j2").render(**report_context(run, base, ivs, base_ivs))
