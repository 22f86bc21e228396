"""Which queues a round of a pass must visit: the one interface behind which the scheduler's
speed-ups sit, with a plain reference.

``REFERENCE`` visits every non-empty queue every round.  ``FAST`` skips a queue only when a
cheap *necessary* condition for any decision there is false, so skipping it cannot change what
the pass decides (a visit that decides nothing has no effect: it changes no state, and the only
thing it could set up, a reservation, needs an allocated gang in the queue).  A visit can decide
something only if

* some job's GPUs per node fit the free GPUs of the best node (a start on free GPUs), or
* the queue holds an allocated gang, or is in tier 0 and holds a whole-node job (it may take or
  move the reservation), or
* preemption is possible and the free GPUs plus every GPU a victim search could take for this
  queue (unallocated work, its own team's preemptible work, and in tier 0 every account's) reach the smallest job's GPUs.

The fast walk also *reuses* answers computed on the very same inputs (``reuses``): the Fair Tree
ranks and reclaim measures for the same epoch and the same (immutable) usage mapping, and a
failed victim search or a reservation plan for the same job on the same state version
(``ClusterState.version``, bumped by every change of what they read).  The reference recomputes
everything every time.

``tests/sim/test_walk_equivalence.py`` checks over generated workloads that both produce the same
decisions and metrics; ``allot simulate --no-skip`` runs the reference.
"""

from __future__ import annotations

from typing import Protocol

from allotment.core.accounting import Accounting
from allotment.core.modes import Mode
from allotment.core.placement import NodePool
from allotment.core.queues import QueueSet
from allotment.core.tiers import GUARANTEED, UNALLOCATED


class WalkPolicy(Protocol):
    name: str
    reuses: bool  # may answers computed on identical inputs be reused?

    def must_visit(self, q: str, tier: int, account: str, queues: QueueSet, pool: NodePool, acct: Accounting, mode: Mode) -> bool: ...


class Reference:
    name = "reference"
    reuses = False

    def must_visit(self, q: str, tier: int, account: str, queues: QueueSet, pool: NodePool, acct: Accounting, mode: Mode) -> bool:
        return True


class Fast:
    name = "fast"
    reuses = True

    def must_visit(self, q: str, tier: int, account: str, queues: QueueSet, pool: NodePool, acct: Accounting, mode: Mode) -> bool:
        per = queues.min_per(q)
        if per == 0:
            return False  # nothing in it can ever be placed
        if per <= pool.max_free() or queues.has_gang(q):
            return True
        if tier == GUARANTEED and queues.max_per(q) >= pool.max_gpus:
            return True  # a whole-node job may hold the reservation (core.reservation.may_hold)
        if not mode.can_preempt or tier == UNALLOCATED:
            return False
        bound = pool.free_gpus() + acct.unalloc_gpus + acct.alloc_gpus_pre.get(account, 0)
        if tier == GUARANTEED and mode.reclaims:
            bound += acct.alloc_gpus_pre_total
        return bound >= queues.min_gpus(q)


REFERENCE: WalkPolicy = Reference()
FAST: WalkPolicy = Fast()
