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

**Admitted by protection, and yielding** (``debug_over_cap_admits: protection``; ``work``, the
default, is the rule above).  Most debug jobs are debug by their protection but not short by
their work (protected 15 minutes, running up to 30), and the rule above leaves them under the
cap.  Admitting them by their protection alone met the debug target with room but nothing
bounded how long one held GPUs beyond the cap (a job protected 15 minutes that runs 12 hours).
The bounded form:

* *admitted*: a debug job (``core.debug.is_debug``) that is short by its work, as above, or one
  that may still yield (``may_yield_later``): never evicted (``evicted_by`` is None), in a mode
  whose cap search runs (``Mode.reclaims``), and not a job kept to completion;
* *yields* (victim rule ``overdraft-yield``, ``yields``): while its team runs beyond a cap on its
  path, each of its debug jobs that is past its protection and was never evicted may be taken
  by a cap search (``core.preemption.caps``) for any of the team's own allocated work the caps
  hold, whatever the declared priorities, first of the search's classes;
* *the bound*: the GPUs beyond a cap are debug work only, at most ``debug_over_cap``; a job among
  them past its protection runs on only while no work of its team that the cap holds could use
  the room (a place under the cap, off reservations, and the slicing rule's consent,
  ``core.preemption.slicing``: the yield is one of the team's own rules), or it is short by its
  work and gone within ``debug_threshold`` of its start;
* *anti-thrash*: a job is taken by the yield at most once -- once evicted (by any rule) it is
  never a yield victim again, and it passes a cap again only if short by its work.  The team's
  other rules are free of cycles on their own (``within-team``: strictly lower priority;
  ``debug-slice``: a victim ends after its evictor, and a requeued job ends later still), so no
  pair of jobs evicts each other back and forth: one yield at most, then the order those rules keep.

Why every debug job, not only those beyond: which of a team's jobs are "the ones beyond the cap"
is only their start order, which the state a reconciler sees does not keep (``core.decide``
builds the state from a snapshot); the team's debug jobs past their protection hold the cap's
room together while the team is beyond it, and the cap search takes no more than it needs (the
excess plus the requester's GPUs).  The core reads only what a snapshot carries: the jobs, their
protections and ``evicted_by``.

``debug_over_cap: 0`` (the default) is no overdraft: every decision as before.  Backends: the
Slurm association's ``GrpTRES`` and a Kubernetes queue's GPU limit are the cap the backend
itself enforces; with an overdraft they must allow ``max_gpus + debug_over_cap`` while the core
keeps the split (docs/operators-guide.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from allotment.compile.model import Policy
from allotment.core.accounting import Accounting
from allotment.core.contract import min_runtime
from allotment.core.debug import is_debug, is_short_debug
from allotment.core.state import Pend, Run

RULE = "debug-overdraft"
NOTE = "; over its team's max_gpus by {over} GPU(s) of debug work (debug_over_cap {cap})"
# the forms of ``Policy.debug_over_cap_admits``
WORK, PROTECTION = "work", "protection"
YIELD_RULE = "overdraft-yield"  # the victim rule of a job beyond a cap that yields (``yields``)
YIELD_WHY = "a debug job past its protection while its team runs beyond max_gpus; yields to {job}, its team's work the cap holds"


class DebugOverdraft:
    """``Policy.debug_over_cap`` for one cluster: ``gpus`` beyond each cap (0: none), the debug
    threshold (``core.debug``), and whether the overdraft admits debug jobs by their protection
    and lets them yield (``by_protection``: ``debug_over_cap_admits: protection`` in a mode whose
    cap search runs, ``reclaims``)."""

    __slots__ = ("_keep_nonresumable", "_policy", "by_protection", "gpus", "threshold_s")

    def __init__(self, gpus: int, threshold_s: float, policy: Policy | None = None, reclaims: bool = False) -> None:
        self.gpus, self.threshold_s = gpus, threshold_s
        self.by_protection = (gpus > 0 and reclaims and policy is not None
                              and str(policy.debug_over_cap_admits) == PROTECTION)
        self._keep_nonresumable = policy is not None and policy.non_resumable == "run_to_completion"
        self._policy = policy  # a run's clamped minimum runtime is the contract's (``yields``)

    def is_short_debug(self, p: Pend, node_gpus: int) -> bool:
        """Is ``p`` debug work by its protection, its size (nodes of ``node_gpus`` GPUs) and its
        remaining work?"""
        return is_short_debug(p.mr, p.gpus, p.work - p.done_work, self.threshold_s, node_gpus)

    def may_yield_later(self, p: Pend, node_gpus: int) -> bool:
        """With ``by_protection``: is ``p`` a debug job that the yield could take once past its
        protection -- never evicted (the yield takes a job at most once) and not kept to
        completion (no rule takes that)?"""
        return (self.by_protection and p.evicted_by is None and is_debug(p.mr, p.gpus, self.threshold_s, node_gpus)
                and not (self._keep_nonresumable and not p.resumable))

    def admits(self, acct: Accounting, p: Pend, node_gpus: int) -> bool:
        """May the allocated ``p``, held by a ``max_gpus`` on its path, start beyond it?"""
        return (self.gpus > 0 and (self.is_short_debug(p, node_gpus) or self.may_yield_later(p, node_gpus))
                and acct.fits_caps_over(p.aid, p.gpus, self.gpus))

    def yielding(self, acct: Accounting, account: str) -> bool:
        """Do ``account``'s debug jobs past their protection yield now: the overdraft admits by
        protection and the account runs beyond a cap on its path?"""
        return self.by_protection and acct.cap_excess(account, 0) > 0

    def yields(self, r: Run, node_gpus: int) -> bool:
        """Is the running ``r`` (past its protection, of a team that is ``yielding``) a job the
        yield may take: a debug job (by the contract's clamped minimum runtime) never evicted?"""
        if r.evicted_by is not None or self._policy is None:
            return False
        return is_debug(min_runtime(r.spec.min_runtime, self._policy), r.gpus, self.threshold_s, node_gpus)

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
