"""When a team may slice its own work (docs/design/preemption.md, "Within-team slicing").

Declared priority orders a team's own jobs; it must never reorder teams.  A team that runs at or
above what it is owed (tier ``BORROWING``) gains nothing from evicting its own job for a
higher-priority one except the node, and that node would otherwise free up for the teams ranked
ahead of it *when the victims end*.  So a borrowing team may slice only if

* the job it starts is expected to end no later than every own victim would (``ends_within``):
  then every GPU it takes is one its team holds at that moment anyway, and the node frees no
  later than without the slice -- a short debug job slicing a long run never delays anyone; or
* no better-ranked queue (an earlier queue key: lower tier, then better Fair Tree rank) has an
  allocated job waiting that would fit on a victim's node once the victims there end
  (``frees_room_for``): nobody ranked ahead could use that node.

The pass checks the victims a search found and searches again without slicing if they break this
rule (``core.starting``).  A guaranteed team (tier ``GUARANTEED``) may always slice: it is owed
those GPUs.  Strictly lower declared priority (of any sign) is the victim rule itself, in
``victims.py`` and ``caps.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from allotment.core.debug_overdraft import YIELD_RULE
from allotment.core.preemption import debug_slice
from allotment.core.preemption.view import Victim
from allotment.core.state import Run
from allotment.core.tiers import BORROWING

# the victim rules that slice the requester's own team (the debug overdraft's yield is one:
# ``core.debug_overdraft``)
OWN_TEAM = ("within-team", debug_slice.RULE, YIELD_RULE)


def may_slice(tier: int, ends_within_victims: bool, better_ranked_job_fits_there: Callable[[], bool]) -> bool:
    """May a queue of ``tier`` evict these jobs of its own team now?  (The last test is the
    costly one, asked only when the others do not decide.)"""
    return tier < BORROWING or ends_within_victims or not better_ranked_job_fits_there()


def ends_within(end: float, victims: Sequence[Victim], running: Mapping[str, Run]) -> bool:
    """Is ``end`` (the starting job's expected end) no later than every own-team victim's?"""
    return all(end <= running[v.job_id].est_end for v in victims if v.rule in OWN_TEAM)


def frees_room_for(need_per: int, victims: Sequence[Victim], running: Mapping[str, Run], free: Sequence[int]) -> bool:
    """Would a job needing ``need_per`` GPUs on one node (0: none waits) fit on a node of the
    own-team ``victims`` once they end?"""
    own = [v.job_id for v in victims if v.rule in OWN_TEAM]
    if need_per <= 0 or not own:
        return False
    room: dict[int, int] = {}
    for j in own:
        for i, g in running[j].placement:
            room[i] = room.get(i, free[i]) + g
    return any(r >= need_per for r in room.values())
