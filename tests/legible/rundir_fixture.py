"""Make a run dir the way ``allot simulate --save DIR`` will (docs: legible/rundir.py), from the
current simulator, until the simulator writes one itself.

A ``_Sim`` subclass (the simulator allows interpreted subclasses for tests) records what each
pass decided as ``events.jsonl`` lines and the Fair Tree state every hour as
``fairshare.jsonl``; everything else is what the CLI already produces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.compile.render import to_json
from allotment.core.context import build_context
from allotment.core.fairshare import rank_leaves
from allotment.core.jobs import JobSpec
from allotment.core.usage import WindowView
from allotment.sim.runner import HEALTH, _Sim
from allotment.sim.workloads import from_scenario
from allotment.traces.writer import sorted_items, write_trace

HOUR = 3600.0


class RecordingSim(_Sim):
    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.events: list[dict[str, Any]] = []
        self.snaps: list[dict[str, Any]] = []
        self.next_snap = 0.0
        self.started_at: dict[str, float] = {}

    def _ev(self, t: float, kind: str, **kw: Any) -> None:
        self.events.append({"t": round(t, 3), "event": kind, **kw})

    def _arrive(self, spec: JobSpec, now: float) -> bool:
        self._ev(now, "submit", job=spec.id, account=spec.account, gpus=spec.gpus)
        return super()._arrive(spec, now)

    def _reject(self, jid: str, now: float) -> None:
        s = self.by_id[jid]
        self._ev(now, "reject", job=jid, account=s.account, gpus=s.gpus, reason="can never fit")
        super()._reject(jid, now)

    def _apply(self, kind: int, payload: Any, now: float) -> bool:
        changed = super()._apply(kind, payload, now)
        if kind == HEALTH and changed:
            node, healthy = payload
            self._ev(now, "resume" if healthy else "drain", node=node, reason="health")
        return changed

    def _stopped(self, spec: JobSpec, now: float, *, completed: bool) -> None:
        start, rate, _ = self.starts[spec.id]
        if completed:
            self._ev(now, "end", job=spec.id, account=spec.account, gpus=spec.gpus,
                     charged_gpu_hours=round(rate * (now - start) / HOUR, 4))
        super()._stopped(spec, now, completed=completed)

    def _pass(self, now: float) -> None:
        while self.next_snap <= now:
            self._snapshot(self.next_snap)
            self.next_snap += HOUR
        super()._pass(now)
        d = self.last_decisions
        for p in d.preemptions:
            s = self.by_id[p.job_id]
            self._ev(now, "preempt", job=p.job_id, account=s.account, gpus=s.gpus, by=p.for_job,
                     rule=p.rule, reason=p.reason, lost_gpu_hours=round(p.lost_work * s.gpus / HOUR, 4))
        for st in d.starts:
            s = self.by_id[st.job_id]
            self._ev(now, "start", job=st.job_id, account=s.account, gpus=s.gpus,
                     nodes=sorted({n for n, _ in st.placement}), allocated=st.allocated, reason=st.reason)
        for r in d.reservations:
            s = self.by_id[r.job_id]
            self._ev(now, "reserve", job=r.job_id, account=s.account, gpus=s.gpus,
                     nodes=list(r.nodes), at=round(r.at, 3), reason=r.reason)

    def _snapshot(self, t: float) -> None:
        ctx = self.ctx
        usage = WindowView(self.ledger, t)
        used = {leaf: usage.get(leaf, 0.0) for leaf in ctx.leaves}
        running: dict[str, int] = {}
        pending: dict[str, int] = {}
        for r in self.sched.running.values():
            running[r.account] = running.get(r.account, 0) + r.gpus
        for p in self.sched.pending.values():
            pending[p.account] = pending.get(p.account, 0) + p.gpus
        leaves = []
        for lr in rank_leaves(ctx, used):
            ent = ctx.entitlement_gpus.get(lr.leaf, 0.0)
            owed = ent * ctx.policy.lookback_s / HOUR
            leaves.append({"leaf": lr.leaf, "tier": 0 if used[lr.leaf] < owed else 1, "rank": lr.rank,
                           "usage_gpu_hours": round(used[lr.leaf], 4), "entitlement_gpus": round(ent, 4),
                           "running_gpus": running.get(lr.leaf, 0), "pending_gpus": pending.get(lr.leaf, 0)})
        sub: dict[str, float] = {}
        for leaf, path in ctx.paths.items():
            for n in path:
                sub[n] = sub.get(n, 0.0) + used.get(leaf, 0.0)
        nodes = [{"node": n, "usage_gpu_hours": round(sub.get(n, 0.0), 4), "share": round(ctx.tree[n].share, 6)}
                 for n in sorted(ctx.tree)]
        self.snaps.append({"t": round(t, 3), "leaves": leaves, "nodes": nodes})


def make_run_dir(out: Path, config: CompiledConfig, *, cluster: str = "b200", days: float = 2.0,
                 seed: int = 0, policy: str = "budgets") -> Path:
    """Simulate the bundled ai2 scenario and save it as a run dir in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    workload = from_scenario(config, "ai2", cluster=cluster, days=days, seed=seed)
    ctx = build_context(config, cluster, mode=policy)
    sim = RecordingSim(config, cluster, workload, days, ctx)
    sim.run()
    sim._snapshot(sim.end)
    metrics = sim.summary()
    metrics.update(policy=policy, cluster=cluster, seed=seed, days=days, capacity_gpus=ctx.capacity_gpus)
    compiled = to_json(config)
    (out / "compiled.json").write_text(compiled, encoding="utf-8")
    meta = {"format_version": 1, "allot_version": "test", "policy": policy, "cluster": cluster,
            "seed": seed, "days": days, "scenario": "ai2", "t0": ctx.epoch.isoformat(),
            "capacity_gpus": ctx.capacity_gpus, "no_skip": False,
            "config_sha256": config.inputs_sha256}
    (out / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    write_trace(out / "trace.jsonl", sorted_items(workload.jobs, workload.node_events))
    sim.events.sort(key=lambda e: e["t"])  # stable: same-time events keep pass order
    (out / "events.jsonl").write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in sim.events), encoding="utf-8")
    (out / "fairshare.jsonl").write_text("".join(json.dumps(s, sort_keys=True) + "\n" for s in sim.snaps), encoding="utf-8")
    return out

