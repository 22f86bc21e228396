"""Victim rule ``gang-sparing`` (knob ``spare_gangs``, off by default; docs/design/preemption.md,
"Sparing gangs").

Why: a running gang that a smaller job evicts costs more than the work it throws away.  To run
again it needs all of its nodes free at once, which on a busy cluster means a reservation and a
drain of its own: on 30 days of ``ai2-big-gangs`` (h100, seed 1) half the one reservation's hours
(373 of 713 h) went to restarting large jobs that had been preempted after they started, 247 of
those 439 preemptions by a job of one node or less that needed 8 GPUs, not 64-256.  The victim
order (``victims``: worst class, then lost work) does not see that cost: a gang that has just
checkpointed loses no work and so is the *cheapest* victim of its class.

The rule, in three forms.  ``class``: among the ways to free room that need the same worst victim
class, prefer the one that breaks no running gang larger than the requester, and among those that
do, the one that breaks the fewest such GPUs; lost work decides only after that.  ``first``: an
option that breaks a larger allocated gang ranks after every option that breaks none, whatever
their classes (a smaller job takes another team's single-node work by ``reclaim``, or waits, rather
than break its own team's lower-priority gang).  ``wait``: ``first``, and a job smaller than a
running allocated gang does not take it at all (``within-team``, ``reclaim``, ``debug-slice``)
until it is starving (``core.starvation``, one hour since it became eligible): before then it
takes other victims or waits, so a 15-minute debug job no longer sends its team's 128-GPU run
back to the queue for a drain of 16 nodes; after it, the starvation bound is kept.  "A gang larger
than the requester" is a running job spread over more than one node with more GPUs than the job
asking: it is the one whose restart needs a drain the requester's own start did not (a job of the
gang's size or larger would need as many whole nodes anyway).

What it keeps: every victim a chosen set holds is one its class's rule admits, so the rule only
chooses *among* victim sets the search would already accept (with ``class`` the order of the
classes is untouched too); each chosen set still passes the same summed-distance check, the same
anti-thrash test (``evicted_by``) and the same non-resumable bound.  With ``class`` it never makes a
search fail that found victims: the pick changes only within a class, and a pick without a
``reclaim`` victim needs no distance check (it forbids nothing: a job whose only option breaks a
gang still takes it).  With ``first`` a pick that skips a gang for a ``reclaim`` victim may fail the
distance check where the gang would have needed none: the job then waits, as any job whose best
pick fails does, until the gang ends or another option passes.  The fast walk's proof that no
reclaim can pass (``futile_reclaim``, ``victims._without_reclaim``) assumes a node freed without
a ``reclaim`` victim ranks before one that needs one, which ``first`` breaks, so under ``first``
and ``wait`` the walk does not use it (the reference never does).  What a gang costs depends only on the victim's
placement and GPUs and on the requester's GPUs, fixed for a run and a job, so the fast walk's
kept picks (``kept_pick``: an untouched node keeps its option) still hold.

Measured (docs/results.md, stop 44): no form moves the large-job p90 beyond the seeds' noise --
the one reservation is held 99% of the month whoever holds it -- while ``wait`` halves the large
jobs' restarts and cuts lost GPU-hours by 22-30%, at the small jobs' waits.  Hence off by default.
"""

from __future__ import annotations

from collections.abc import Mapping

from allotment.core.starvation import is_starving
from allotment.core.state import Pend, Run

RULE = "gang-sparing"

# the knob's forms (``Policy.spare_gangs``), as the small ints the hot loop reads
OFF, WITHIN_CLASS, FIRST, WAIT = 0, 1, 2, 3
FORMS = {"off": OFF, "class": WITHIN_CLASS, "first": FIRST, "wait": WAIT}
# with ``first``, an option that breaks a larger allocated gang ranks after every victim class
# (the classes are 0-4, ``victims.CLASS_*``): its class is raised by this much
AFTER_EVERY_CLASS = 8


def gang_gpus(r: Run, gpus: int) -> int:
    """The GPUs of ``r`` that a job of ``gpus`` GPUs would break as a gang (0: none): ``r`` runs
    on more than one node and is larger than the job."""
    return r.gpus if r.gpus > gpus and len(r.placement) > 1 else 0


def option(running: Mapping[str, Run], victims: list[str], gpus: int, form: int) -> tuple[int, int]:
    """What the rule adds to the key of an option that takes ``victims`` for a job of ``gpus``
    GPUs: (how much its worst class is raised, the GPUs of the larger gangs it breaks).  With
    ``class`` the class is kept and the gang GPUs come right after it; with ``first`` an option
    that breaks a larger *allocated* gang also ranks after every class (a larger unallocated
    gang only by the gang GPUs: free work yields first, whatever its shape)."""
    total = 0
    allocated = False
    for j in victims:
        r = running[j]
        g = gang_gpus(r, gpus)
        if g:
            total += g
            allocated = allocated or r.allocated
    return (AFTER_EVERY_CLASS if form >= FIRST and allocated else 0), total


def spared(r: Run, p: Pend, t: float) -> bool:
    """With ``wait``: may ``p`` not take ``r`` yet by ``within-team``, ``reclaim`` or
    ``debug-slice``?  ``r`` is a larger allocated gang and ``p`` is not starving
    (``core.starvation``: waited ``STARVING_S`` at the epoch ``t``).  The answer turns with time
    alone, so a search that left a gang out fails only for now (``victims``: ``FOR_NOW``, never
    a lasting failure the fast walk would keep)."""
    return r.allocated and gang_gpus(r, p.gpus) > 0 and not is_starving(t - p.eligible)
