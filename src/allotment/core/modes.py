"""Scheduling modes as strategies: the policy (``budgets``) and the two baselines the simulator
compares it with.  The pass (``core.scheduler``) asks its mode; it never tests a mode's name.

* ``budgets``: one queue per account (and one for its unallocated work), ranked by tier and Fair
  Tree; candidates re-ordered by the within-team score; every preemption rule; allocated work is
  protected for its minimum runtime.
* ``priority`` (the old scheduler): one global queue in submission order (everyone used the same
  priority level); work within a team's non-preemptible limit (its entitlement) runs protected
  forever, anything beyond it runs preemptible on idle GPUs and may not preempt.
* ``fifo``: one global queue in submission order, no preemption, nothing protected but nothing
  ever preempted either.
"""

from __future__ import annotations

import math

from allotment.core.contract import is_allocated, protected_until
from allotment.core.state import Pend

GLOBAL_QUEUE = "*"
FREE_SUFFIX = "#unallocated"  # queue of an account's unallocated work
BASELINE_DEPTH = 128  # candidates one visit of the single baseline queue examines


class LaunchTerms:
    """How a start runs (read-only by convention; a plain slotted class, not a frozen
    dataclass, for the reason ``pass_inputs.PassInputs`` is one)."""

    __slots__ = ("allocated", "protected_until", "reason")

    def __init__(self, allocated: bool, protected_until: float, reason: str) -> None:
        self.allocated = allocated
        self.protected_until = protected_until
        self.reason = reason


class Mode:
    name = ""
    ranks_queues = False  # queues ordered by tier and Fair Tree (else: one queue)
    scores = False  # candidates re-ordered by the within-team score
    can_preempt = True
    reclaims = False  # cross-team reclaim and within-team slicing
    wakes_on_protection = False  # protections end (a pass must look again then)
    limits = False  # beyond_limit can be True (else the pass need not look up its arguments)

    def __init__(self, queue_depth: int) -> None:
        self.depth = queue_depth
        # a debug job may reclaim whatever its account runs now (Policy.debug_reclaim, only in a
        # mode that reclaims: mode_for; core.preemption.terms.may_reclaim)
        self.debug_reclaims = False

    def queue_of(self, account: str, min_runtime_s: float) -> str:
        return GLOBAL_QUEUE

    def queue_note(self, tier: int, rank: int) -> str:
        """What a start's reason says about its queue's place."""
        return ""

    def key(self, p: Pend) -> tuple[float, float, str]:
        """Submission order: the baselines know no declared priority."""
        return (0.0, p.eligible, p.jid)

    def beyond_limit(self, p: Pend, alloc_gpus: int, limit: float) -> bool:
        """True when a blocked job may neither preempt nor hold a reservation."""
        return False

    def launch(self, p: Pend, now: float, alloc_gpus: int, limit: float, why: str) -> LaunchTerms:
        raise NotImplementedError


class Budgets(Mode):
    name = "budgets"
    ranks_queues = True
    scores = True
    reclaims = True
    wakes_on_protection = True

    def queue_of(self, account: str, min_runtime_s: float) -> str:
        """Unallocated work gets its own queue, ranked after every allocated queue: free work
        only fills capacity nobody with budget wants, so it should not start first and be
        evicted a tick later."""
        return account if is_allocated(min_runtime_s) else account + FREE_SUFFIX

    def queue_note(self, tier: int, rank: int) -> str:
        return f"; tier {tier}, fair-share rank {rank + 1}"  # counted from 1, as explain counts

    def key(self, p: Pend) -> tuple[float, float, str]:
        return (-float(p.declared), p.eligible, p.jid)

    def launch(self, p: Pend, now: float, alloc_gpus: int, limit: float, why: str) -> LaunchTerms:
        allocated = is_allocated(p.mr)
        return LaunchTerms(allocated, protected_until(now, p.mr, p.work - p.done_work), why)


class Priority(Mode):
    name = "priority"
    limits = True

    def __init__(self, queue_depth: int) -> None:
        super().__init__(BASELINE_DEPTH)

    def beyond_limit(self, p: Pend, alloc_gpus: int, limit: float) -> bool:
        """Work beyond the team's non-preemptible limit only runs on idle GPUs."""
        return alloc_gpus + p.gpus > limit

    def launch(self, p: Pend, now: float, alloc_gpus: int, limit: float, why: str) -> LaunchTerms:
        allocated = is_allocated(p.mr) and alloc_gpus + p.gpus <= limit
        return LaunchTerms(
            allocated,
            math.inf if allocated else now,
            f"{why}; {'within' if allocated else 'beyond'} the team's non-preemptible limit",
        )


class Fifo(Mode):
    name = "fifo"
    can_preempt = False

    def __init__(self, queue_depth: int) -> None:
        super().__init__(BASELINE_DEPTH)

    def launch(self, p: Pend, now: float, alloc_gpus: int, limit: float, why: str) -> LaunchTerms:
        return LaunchTerms(is_allocated(p.mr), math.inf, f"{why}; first come, first served")


def mode_for(name: str, queue_depth: int, debug_reclaim: bool = False) -> Mode:
    kinds: dict[str, type[Mode]] = {"budgets": Budgets, "priority": Priority, "fifo": Fifo}
    mode = kinds[name](queue_depth)
    mode.debug_reclaims = debug_reclaim and mode.reclaims
    return mode
