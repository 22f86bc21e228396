"""Victim rule ``gang-sparing`` (knob ``spare_gangs``, off by default; docs/design/preemption.md,
"Sparing gangs").

Why: a running gang that a smaller job evicts costs more than the work it throws away.  To run
again it needs all of its nodes free at once, which on a busy cluster means a reservation and a
drain of its own: on 30 days of ``ai2-big-gangs`` (h100, seed 1) half the one reservation's hours
(373 of 713 h) went to restarting large jobs that had been preempted after they started, 247 of
those 439 preemptions by a job of one node or less that needed 8 GPUs, not 64-256.  The victim
order (``victims``: worst class, then lost work) does not see that cost: a gang that has just
checkpointed loses no work and so is the *cheapest* victim of its class.

The rule: among the ways to free room that need the same worst victim class, prefer the one that
breaks no running gang larger than the requester, and among those that do, the one that breaks the
fewest such GPUs; lost work decides only after that.  "A gang larger than the requester" is a
running job spread over more than one node with more GPUs than the job asking: it is the one whose
restart needs a drain the requester's own start did not (a job of the gang's size or larger would
need as many whole nodes anyway).

What it keeps: the classes and their order are untouched (unallocated work first, then yielding,
within-team, reclaim, debug-slice), so the rule only chooses *among* victim sets the search would
already accept; each chosen set still passes the same summed-distance check, the same
anti-thrash test (``evicted_by``) and the same non-resumable bound.  It never makes a search
fail that would have found victims on a node-set it ranks lower: it reorders, it forbids nothing
(so a job whose only option breaks a gang still takes it, and the starvation bound of
docs/design/reservation.md is unchanged).  What a gang costs depends only on the victim's
placement and GPUs and on the requester's GPUs, fixed for a run and a job, so the fast walk's
kept picks (``kept_pick``: an untouched node keeps its option) still hold.
"""

from __future__ import annotations

from collections.abc import Mapping

from allotment.core.state import Run

RULE = "gang-sparing"


def gang_gpus(r: Run, gpus: int) -> int:
    """The GPUs of ``r`` that a job of ``gpus`` GPUs would break as a gang (0: none): ``r`` runs
    on more than one node and is larger than the job."""
    return r.gpus if r.gpus > gpus and len(r.placement) > 1 else 0


def broken_gpus(running: Mapping[str, Run], victims: list[str], gpus: int) -> int:
    """The GPUs of the gangs larger than a job of ``gpus`` GPUs among ``victims``: the
    second key of a node's option under this rule, after its worst class."""
    total = 0
    for j in victims:
        total += gang_gpus(running[j], gpus)
    return total
