"""A team's own rules throw a non-resumable job's run away at most once (issue 25;
docs/design/preemption.md, "Thrown away at most once").

A non-resumable job restarts from zero after every eviction, so each eviction loses its whole run.
The rules that slice a team's own work (``within-team``: strictly lower declared priority;
``debug-slice``: the same priority, ending later) may take it once; after that (``Run.evicted_by``
is set) they leave it to finish.  Without the bound a team's stream of priority-2 debug jobs threw
an 8-GPU interactive session (priority 1, 4 h protection, 8 h of work) away 47 times, each time
at the end of its protection: 1,504 GPU-h lost for nothing, and 30 days of `ai2` on b200 seed 1
lost 20,761 GPU-h, a third of the cluster's time (6,382 with this rule).

A resumable job loses at most a checkpoint interval and stays a victim.  Another team's
``reclaim`` is not bound: fair share between teams must not depend on a flag the victim's own
team sets, or marking work non-resumable would buy immunity after its first eviction.
"""

from __future__ import annotations

from allotment.core.state import Run


def may_throw_away(r: Run) -> bool:
    """May the team's own rules evict ``r`` (past its protection) now?  Not if it is a
    non-resumable job that was evicted before."""
    return r.resumable or r.evicted_by is None
