"""A capped team's short debug jobs may run a bounded number of GPUs beyond its ``max_gpus``
(rule ``debug-overdraft``, ``Policy.debug_over_cap``; docs/design/preemption.md, "Caps").

Why: the contract promises that debug work starts in seconds, and that promise is what removes
the incentive to squat.  A team held at its ``max_gpus`` has its cap filled by its own
*protected* work (batch, training runs, sessions: protections of 30 minutes to 8 hours), which
no rule may take, so its debug jobs waited for those protections to end: on ``ai2-big-gangs``
red-team's debug p90 was 3.0-5.4 hours while every other team's was 10 s (docs/results.md).
That is the squatting incentive again, inside the team: keep a job running to keep a place
under the cap.  The post's old scheduler bound its per-team limit on protected work only; here
the cap keeps binding everything, and only short debug work may pass it, by a bounded amount.

The rule: an allocated job that is a debug job (``core.debug``: protected at most
``debug_threshold``, at most one node's GPUs) *and short by its work* (its remaining work at most
``debug_threshold``, as for a job that yields to a reservation: a 10-minute protection on a
12-hour run is not debug work) may start while every ``max_gpus`` on its path, counting it, stays
within ``max_gpus + debug_over_cap``.  Nothing else changes:

* every other start still needs room under ``max_gpus`` itself, so the GPUs beyond the cap are
  only ever debug work, at most ``debug_over_cap`` of them, each job gone within
  ``debug_threshold`` of its start (its work ends; at most ``debug_threshold`` plus a
  reconcile interval of overshoot per job);
* the overdraft is charged like any allocated work (the team pays for it in fair share), and a
  team over its cap is over its capped entitlement, so the overdraft never reclaims another
  team's work: it takes free GPUs, unallocated work, or what its own team's rules allow;
* a cap search (``core.preemption.caps``) still makes room under ``max_gpus`` itself, for a
  debug job when the overdraft is full too.

``debug_over_cap: 0`` (the default) is no overdraft: every decision as before.  Backends: the
Slurm association's ``GrpTRES`` and a Kubernetes queue's GPU limit are the cap the backend
itself enforces; with an overdraft they must allow ``max_gpus + debug_over_cap`` while the core
keeps the split (docs/operators-guide.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from allotment.core.accounting import Accounting
from allotment.core.debug import is_short_debug
from allotment.core.state import Pend

RULE = "debug-overdraft"
NOTE = "; over its team's max_gpus by {over} GPU(s) of debug work (debug_over_cap {cap})"


class DebugOverdraft:
    """``Policy.debug_over_cap`` for one cluster: ``gpus`` beyond each cap (0: none) and the
    debug threshold (``core.debug``)."""

    __slots__ = ("gpus", "threshold_s")

    def __init__(self, gpus: int, threshold_s: float) -> None:
        self.gpus, self.threshold_s = gpus, threshold_s

    def is_short_debug(self, p: Pend, node_gpus: int) -> bool:
        """Is ``p`` debug work by its protection, its size (nodes of ``node_gpus`` GPUs) and its
        remaining work?"""
        return is_short_debug(p.mr, p.gpus, p.work - p.done_work, self.threshold_s, node_gpus)

    def admits(self, acct: Accounting, p: Pend, node_gpus: int) -> bool:
        """May the allocated ``p``, held by a ``max_gpus`` on its path, start beyond it?"""
        return self.gpus > 0 and self.is_short_debug(p, node_gpus) and acct.fits_caps_over(p.aid, p.gpus, self.gpus)

    def beyond_depth(self, acct: Accounting, jobs: Iterable[Pend], offered: set[str], node_gpus: int,
                     depth: int) -> list[Pend]:
        """Of a queue's ``jobs`` (in the order its visits offer them), the first ``depth`` the
        overdraft admits that the visit did not offer (``offered``).  A team held at its cap has
        hundreds of jobs waiting and its visit offers ``queue_depth`` of them, mostly work the cap
        holds: without this its debug jobs further back were never offered the overdraft (seed 1
        of ``ai2-big-gangs``, red-team: a node with free GPUs at hand for 505 of its 1,399 debug
        jobs that still waited over a minute)."""
        out: list[Pend] = []
        for p in jobs:
            if p.jid not in offered and p.n > 0 and self.admits(acct, p, node_gpus):
                out.append(p)
                if len(out) >= depth:
                    break
        return out

    def note(self, acct: Accounting, account: str) -> str:
        """The start reason's note when ``account`` now runs beyond a cap ("" when it does not)."""
        if not self.gpus:
            return ""
        over = acct.cap_excess(account, 0)
        return NOTE.format(over=over, cap=self.gpus) if over > 0 else ""
