"""``decide(snapshot, ctx, now) -> Decisions``: the pure entry point a reconciler calls.

It builds a fresh ``Scheduler`` from the snapshot (see ``core.snapshot`` for what each field
means), runs one pass with the full pending order and returns the decisions; the snapshot is not
changed.  The simulator keeps one ``Scheduler`` alive instead, for speed, and calls the same
``run_pass``, so both take the very same decisions from the same state.
"""

from __future__ import annotations

from allotment.core.context import Context
from allotment.core.decisions import Decisions
from allotment.core.priority import propagate
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import Snapshot


def build_scheduler(snapshot: Snapshot, ctx: Context, now: float) -> Scheduler:
    sched = Scheduler(ctx, snapshot.nodes)
    for node in snapshot.nodes:
        if not node.healthy:
            sched.set_health(node.name, False, now)
    declared = propagate([r.spec for r in snapshot.running] + [p.spec for p in snapshot.pending])
    for r in sorted(snapshot.running, key=lambda r: r.spec.id):
        sched.add_running(
            r.spec,
            r.start,
            r.placement,
            allocated=r.allocated,
            protected_until=r.protected_until,
            done_before=r.done_before,
            declared=declared[r.spec.id],
            evicted_by=r.evicted_by,
        )
    for p in sorted(snapshot.pending, key=lambda p: p.spec.id):
        sched.add_pending(
            p.spec,
            p.eligible,
            p.queued_since,
            done_work=p.done_work,
            declared=declared[p.spec.id],
            evicted_by=p.evicted_by,
        )
    return sched


def decide(snapshot: Snapshot, ctx: Context, now: float) -> Decisions:
    """One scheduling pass over ``snapshot`` at ``now``, with every reason and metric exposed."""
    return build_scheduler(snapshot, ctx, now).run_pass(now, snapshot.usage, explain=True)
