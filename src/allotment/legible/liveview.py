"""The live views (``allot status --state``, ``allot serve``, ``/metrics``): the budget tree from
the ledger and the applied config, the queue with each job's sort key, drained nodes, the last
audited actions.  The same ``ClusterView`` as a saved run, so both read alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allotment.compile.model import CompiledConfig
from allotment.compile.render import to_dict
from allotment.core.context import build_context
from allotment.legible.livestate import LiveState, pinned_order, window_usage
from allotment.legible.runview import ClusterView, DrainedNode
from allotment.legible.tree import TreeInputs, build_tree, compiled_entitlements


@dataclass(frozen=True, slots=True)
class QueueRow:
    job: str  # the backend's id (a Slurm job id on Slurm)
    account: str
    user: str
    gpus: int
    sort_key: int  # the backend priority: allotment pins the core's head above every other job (reconcile/pinned_order.py)
    waiting_s: float
    reason: str  # why it sits there, from the audit line that set the key


def _cluster(state: LiveState, config: CompiledConfig) -> str:
    c = state.status.cluster
    return c if c in config.clusters else config.largest_cluster()


def live_view(state: LiveState, config: CompiledConfig) -> ClusterView:
    cluster = _cluster(state, config)
    ctx = build_context(config, cluster)
    obs = state.observation
    alloc: dict[str, int] = {}
    unalloc: dict[str, int] = {}
    pend: dict[str, int] = {}
    on: dict[str, list[str]] = {}
    for j in obs.jobs if obs else ():
        if j.state == "running":
            tgt = unalloc if j.min_runtime_s == 0 else alloc
            tgt[j.account] = tgt.get(j.account, 0) + j.gpus
            for n in j.nodes:
                on.setdefault(n, []).append(j.id)
        elif j.state == "pending":
            pend[j.account] = pend.get(j.account, 0) + j.gpus
    inp = TreeInputs(
        parents={n: t.parent for n, t in ctx.tree.items()},
        shares={n: t.share for n, t in ctx.tree.items()},
        entitlement_gpus=compiled_entitlements(to_dict(config), cluster),
        usage_gpu_hours=window_usage(state, ctx.policy.lookback_s),
        running_allocated=alloc, running_unallocated=unalloc, pending_gpus=pend,
        window_s=float(ctx.policy.lookback_s),
    )
    drained = tuple(
        DrainedNode(n.name, state.now, tuple(sorted(on.get(n.name, ()))))
        for n in (obs.nodes if obs else ()) if n.drain or n.down
    )
    return ClusterView(cluster, state.now, ctx.capacity_gpus, sum(alloc.values()) + sum(unalloc.values()),
                       sum(pend.values()), tuple(build_tree(inp)), drained)


def queue(state: LiveState) -> list[QueueRow]:
    """Pending jobs, highest sort key first (the order the backend starts them), then id."""
    obs = state.observation
    if obs is None:
        return []
    pinned = pinned_order(state)
    rows = [
        QueueRow(j.id, j.account, j.user, j.gpus, j.priority, max(0.0, obs.at - j.submit),
                 str(pinned.get(j.id, {}).get("reason", "not in the ordered head: the backend's own fair-share priority")))
        for j in obs.pending()
    ]
    rows.sort(key=lambda r: (-r.sort_key, r.job))
    return rows


# what the page shows of an action; a line written without one of them (an older version, a
# hand edit) shows it empty rather than emptying the page (issue 32, item 4)
_SHOWN = {"time": 0.0, "action": "", "dry_run": False, "target": "", "rule": "", "result": "",
          "reason": ""}


def last_actions(state: LiveState, n: int = 20) -> list[dict[str, Any]]:
    """The newest ``n`` audit outcomes (and intents in flight), newest first."""
    return [{**_SHOWN, **a} for a in reversed(state.actions[-n:])]


def drain_reasons(state: LiveState) -> dict[str, str]:
    obs = state.observation
    return {n.name: n.reason for n in (obs.nodes if obs else ()) if n.drain or n.down}
