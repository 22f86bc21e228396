"""Rule ``within-team``: a job may take its own team's work of strictly lower declared priority
(docs/design/preemption.md).

Declared priority orders a team's own jobs, of any sign (priority 0 slices priority -5 work).
Strictly lower means two jobs can never evict each other by this rule.  A non-resumable job is
thrown away by it at most once (``thrown_away_once``).  When a borrowing team may slice at all is
``slicing``'s; this module says only which of its own jobs a job may take.  Both victim searches
call it: ``victims`` for a job the cluster blocks, ``caps`` for one a ``max_gpus`` cap holds back.
"""

from __future__ import annotations

from allotment.core.preemption.thrown_away_once import may_throw_away
from allotment.core.state import Run

RULE = "within-team"


def may_take(declared: int, r: Run) -> bool:
    """May a job of declared priority ``declared`` take its own team's running job ``r``
    (already past its protection)?"""
    return r.declared < declared and may_throw_away(r)
