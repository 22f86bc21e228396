"""Fair-share samples of a finished run, for ``fairshare.jsonl`` in a run directory.

Rebuilt from the event log alone (a start's ``charged_gpus`` feeds the same sliding-window
``UsageLedger`` the simulator charged), then ranked with the core's own ``rank_leaves``: the
numbers ``allot status --run`` and ``allot report --run`` show are the scheduler's, not a copy.
A sample at time t reflects every event at or before t.  Samples are taken at t = 0, at every
hour boundary inside the run and at its end."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from allotment.core.context import Context
from allotment.core.fairshare import rank_leaves
from allotment.core.usage import UsageLedger
from allotment.sim.events import Event, RunHeader

HOUR = 3600.0


class _State:
    """What a sample needs, advanced one event at a time."""

    def __init__(self, ctx: Context, header: RunHeader) -> None:
        self.ledger = UsageLedger(ctx.policy.lookback_s)
        self.node_gpus = dict(header.nodes)
        self.healthy_gpus = sum(self.node_gpus.values())
        self.rate: dict[str, tuple[str, float, int, bool]] = {}  # running job -> (account, rate, gpus, allocated)
        self.pending: dict[str, tuple[str, int]] = {}  # queued job -> (account, gpus)
        self.held: dict[str, tuple[str, int]] = {}

    def apply(self, e: Event) -> None:
        job = e.job or ""
        if e.event == "submit":
            (self.held if e.held else self.pending)[job] = (e.account or "", e.gpus or 0)
        elif e.event == "eligible":
            self.pending[job] = self.held.pop(job)
        elif e.event == "start":
            acct, gpus = self.pending.pop(job)
            rate = e.charged_gpus or 0.0
            self.rate[job] = (acct, rate, gpus, bool(e.allocated))
            if rate:
                self.ledger.start(acct, e.t, rate)
        elif e.event in ("preempt", "end"):
            acct, rate, gpus, _ = self.rate.pop(job)
            if rate:
                self.ledger.stop(acct, e.t, rate)
            if e.event == "preempt" and e.requeued:
                self.pending[job] = (acct, gpus)
        elif e.event == "drain" and e.state == "unhealthy":
            self.healthy_gpus -= self.node_gpus[e.node or ""]
        elif e.event == "resume":
            self.healthy_gpus += self.node_gpus[e.node or ""]


def _tier(allocated_gpus: int, entitlement_gpus: float) -> int:
    """0 below the entitlement (guaranteed), 1 at or above it (borrowing): the scheduler's rule
    (core/scheduler.py ``_tier``; to be read from core's tiers module once it is public)."""
    return 0 if allocated_gpus < entitlement_gpus else 1


def _sample(ctx: Context, st: _State, t: float) -> dict[str, Any]:
    usage = {leaf: st.ledger.window_gpu_hours(leaf, t) for leaf in ctx.leaves}
    frac = st.healthy_gpus / ctx.capacity_gpus if ctx.capacity_gpus else 0.0
    running: dict[str, int] = {}
    allocated: dict[str, int] = {}
    pending: dict[str, int] = {}
    for acct, _, gpus, alloc in st.rate.values():
        running[acct] = running.get(acct, 0) + gpus
        if alloc:
            allocated[acct] = allocated.get(acct, 0) + gpus
    for acct, gpus in st.pending.values():
        pending[acct] = pending.get(acct, 0) + gpus
    leaves = []
    for r in rank_leaves(ctx, usage):
        ent = ctx.entitlement_gpus.get(r.leaf, 0.0) * frac
        leaves.append(
            {
                "leaf": r.leaf,
                "tier": _tier(allocated.get(r.leaf, 0), ent),
                "rank": r.rank,
                "usage_gpu_hours": usage.get(r.leaf, 0.0),
                "entitlement_gpus": ent,
                "running_gpus": running.get(r.leaf, 0),
                "pending_gpus": pending.get(r.leaf, 0),
            }
        )
    subtree: dict[str, float] = {}

    def total(name: str) -> float:
        node = ctx.tree[name]
        v = sum(total(c) for c in node.children) if node.children else usage.get(name, 0.0)
        subtree[name] = v
        return v

    total(ctx.root)
    nodes = [{"node": n, "usage_gpu_hours": subtree[n], "share": ctx.tree[n].share} for n in sorted(subtree)]
    return {"t": t, "leaves": leaves, "nodes": nodes}


def fairshare_samples(ctx: Context, header: RunHeader, events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    st = _State(ctx, header)
    times = [h * HOUR for h in range(int(header.end // HOUR) + 1) if h * HOUR < header.end] + [header.end]
    it = iter(events)
    nxt = next(it, None)
    for t in times:
        while nxt is not None and nxt.t <= t:
            st.apply(nxt)
            nxt = next(it, None)
        yield _sample(ctx, st, t)
