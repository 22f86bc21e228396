"""``decide(snapshot, ctx, now) -> Decisions``: the pure entry point a reconciler calls.

It builds a fresh ``Scheduler`` from the snapshot (see ``core.snapshot`` for what each field
means), runs one pass and returns its decisions with the full pending order; the snapshot is not
changed.  The simulator keeps one ``Scheduler`` alive instead and calls the same ``run_pass`` with
the same walk, so both take the very same decisions from the same state; the order is computed
after the pass, read-only, so asking for it cannot change a decision.  ``Decisions.wake_at`` says
when the reconciler should run a pass at the latest even if nothing happens.
"""

from __future__ import annotations

from dataclasses import replace

from allotment.core.context import Context
from allotment.core.contract import min_runtime, refusal
from allotment.core.decisions import Decisions, Refusal
from allotment.core.priority import dependency_pass
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import Snapshot
from allotment.core.walk import FAST, WalkPolicy


def build_scheduler(
    snapshot: Snapshot, ctx: Context, now: float, refused: frozenset[str], *, walk: WalkPolicy = FAST
) -> Scheduler:
    """The scheduler holding the snapshot's state; the ``refused`` pending jobs are left out,
    as the simulator never queues a job it rejects at submission."""
    sched = Scheduler(ctx, snapshot.nodes, walk=walk)
    sched.kept = {k.holder: k.anchor for k in snapshot.kept_holds}  # knob keep_hold (or hand_over): the last tick's
    for node in snapshot.nodes:
        if not node.healthy:
            sched.state.set_health(node.name, False, now)
    specs = [r.spec for r in snapshot.running] + [p.spec for p in snapshot.pending]
    graph = dependency_pass(specs + list(snapshot.waiting))  # the waiting jobs lend their urgency
    declared = graph.declared
    sched.state.dependants = graph.dependants
    for r in sorted(snapshot.running, key=lambda r: r.spec.id):
        sched.state.add_running(
            r.spec,
            r.start,
            r.placement,
            allocated=r.allocated,
            protected_until=r.protected_until,
            done_before=r.done_before,
            declared=declared[r.spec.id],
            evicted_by=r.evicted_by,
            eligible=r.eligible,
            yields=r.yields_to_reservation,
            noticed_at=r.noticed_at,
        )
    for p in sorted(snapshot.pending, key=lambda p: p.spec.id):
        if p.spec.id in refused:
            continue
        sched.state.add_pending(
            p.spec,
            p.eligible,
            p.queued_since,
            done_work=p.done_work,
            declared=declared[p.spec.id],
            evicted_by=p.evicted_by,
        )
    return sched


def decide(snapshot: Snapshot, ctx: Context, now: float, *, walk: WalkPolicy = FAST) -> Decisions:
    """One scheduling pass over ``snapshot`` at ``now``, with every reason and the pending order.
    ``snapshot.usage`` should be the window usage at the pass's epoch (``core.epoch``)."""
    refused = refusals(snapshot, ctx)
    sched = build_scheduler(snapshot, ctx, now, frozenset(r.job_id for r in refused), walk=walk)
    d = sched.run_pass(now, snapshot.usage)
    return replace(d, order=sched.order(now, snapshot.usage), wake_at=sched.wake_at(now), refusals=refused,
                   kept_holds=sched.kept_holds())


def refusals(snapshot: Snapshot, ctx: Context) -> tuple[Refusal, ...]:
    """The pending jobs the policy rejects at submission, in id order (the rule is
    ``core.contract.refusal``; the simulator applies it on arrival, a reconciler cancels)."""
    out = []
    for p in sorted(snapshot.pending, key=lambda p: p.spec.id):
        why = refusal(min_runtime(p.spec.min_runtime, ctx.policy), ctx.policy)
        if why is not None:
            out.append(Refusal(p.spec.id, why))
    return tuple(out)
