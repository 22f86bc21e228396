"""``allot explain JOB --state DIR``: a live job (a Slurm job id on Slurm) explained from what the
reconciler recorded: the last observation, the audit outcomes that targeted the job (its pinned
place in the order and why, requeues and their rule) and the ledger's window usage along the
job's allocation path."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.errors import UsageError
from allotment.legible.livestate import LiveState, pinned_order
from allotment.legible.liveview import live_view, queue
from allotment.legible.words import duration, ordinal, percent
from allotment.reconcile.audit import entry_time
from allotment.timefmt import rfc3339


def explain_live(state: LiveState, config: CompiledConfig, job: str) -> dict[str, Any]:
    obs = state.observation
    j = obs.job(job) if obs is not None else None
    actions = [a for a in state.actions if str(a.get("target")) == job and not a.get("dry_run")]
    if j is None and not actions:
        raise UsageError(f"job {job!r}: not in the reconciler's last observation nor its audit log")
    view = live_view(state, config)
    account = j.account if j is not None else ""
    ctx = build_context(config, view.cluster)
    rows = {r.name: r for r in view.tree}
    path = [asdict(rows[n]) for n in ctx.paths.get(account, ())[1:] if n in rows]
    d: dict[str, Any] = {"job": job, "at": state.now, "path": path,
                         "actions": actions[-10:], "observed": asdict(j) if j is not None else None}
    d["summary"] = _summary(state, d, rows.get(account))
    # for a machine, wall-clock times as RFC 3339 UTC (the summary above read them as seconds)
    d["at"] = rfc3339(state.now)
    if d["observed"] is not None:
        for k in ("submit", "start", "eligible"):
            if d["observed"].get(k) is not None:
                d["observed"][k] = rfc3339(d["observed"][k])
    return d


def _summary(state: LiveState, d: dict[str, Any], leaf: Any) -> str:
    j = d["observed"]
    team = ""
    if leaf is not None:
        team = (f"{leaf.name} is {ordinal(leaf.rank)} of {leaf.siblings} among {leaf.parent}'s children "
                f"(used {percent(leaf.ratio)} of its share over the last {duration(_window(leaf))})")
    pin = pinned_order(state).get(d["job"])
    requeues = [a for a in d["actions"] if a.get("action") in ("requeue", "cancel") and a.get("result") == "applied"]
    parts = []
    if j is None:
        parts.append("no longer observed (finished or cancelled)")
    elif j["state"] == "pending":
        order = [r.job for r in queue(state)]  # the backend's own order: highest priority first
        if pin is not None and pin.get("value") is not None and d["job"] in order:
            pos = order.index(d["job"]) + 1
            parts.append(f"{ordinal(pos)} in the cluster's pending order ({pin.get('reason')})")
        else:
            parts.append("pending outside the ordered head: the backend's own fair-share priority orders it")
        parts.append(f"waiting {duration(state.now - j['submit'])} for {j['gpus']} GPUs")
    elif j["state"] == "running":
        kind = "unallocated: free, preemptible at once" if j.get("min_runtime_s") == 0 else f"charged to {j['account']}"
        since = f" for {duration(state.now - j['start'])}" if j.get("start") else ""
        parts.append(f"running{since} on {', '.join(j.get('nodes') or ()) or 'its nodes'} ({j['gpus']} GPUs, {kind})")
    if requeues:
        r = requeues[-1]
        done = "cancelled" if r["action"] == "cancel" else "requeued"
        parts.append(f"{done} {duration(state.now - entry_time(r))} ago ({r.get('rule')}: {r.get('reason')})")
    if team:
        parts.append(team)
    return "; ".join(parts)


def _window(leaf: Any) -> float:
    return float(leaf.owed_gpu_hours / leaf.entitlement_gpus * 3600) if leaf.entitlement_gpus else 0.0


def render_live(d: dict[str, Any]) -> str:
    lines = [f"job {d['job']}: {d['summary']}", "", "allocation path (rank among siblings, window usage vs owed):"]
    for r in d["path"]:
        ratio = percent(r["ratio"])
        lines.append(f"  {'  ' * r['depth']}{r['name']:<22} {ordinal(r['rank'])} of {r['siblings']}  "
                     f"used {r['usage_gpu_hours']:.1f} of {r['owed_gpu_hours']:.1f} GPU-h owed ({ratio})")
    lines += ["", "audited actions on this job (newest last):"]
    for a in d["actions"]:
        lines.append(f"  {rfc3339(entry_time(a))}  {a.get('action')} [{a.get('rule')}] {a.get('reason')} -> {a.get('result')}")
    return "\n".join(lines) + "\n"
