"""Debug jobs take the place of their own team's work of the same priority
(docs/design/preemption.md, "Debug slicing").

The contract: after its minimum runtime a job may be preempted, so that debug jobs start in
seconds.  ``within-team`` lets a job take its team's work of strictly *lower* declared priority
only, and a team's debug jobs usually share one priority with the work that holds its GPUs --
other debug jobs running past their protection, most of all in a team held at its ``max_gpus``
ceiling, where only its own work can make room.  Such a debug job waited for its own team's
work to end.

Rule ``debug-slice``: a blocked debug job (``core.debug.is_debug``, the one definition) may take
the place of its own team's running work of the *same* declared priority that is past its
protection and expected to end later than the debug job would (``may_take``), least lost work
first, and only when no other victim class would do (its class comes after ``reclaim``).

* Same priority only.  Strictly lower is ``within-team``'s.  Higher would be undone: the victim,
  requeued, would take the debug job's place by ``within-team`` once its protection ends.
* Ends later (shortest remaining work first) is the anti-thrash.  A requeued victim has at least
  the work it had left when it was evicted (a resumable one keeps at most what it ran), so its
  end from any later moment is later than its evictor's: it can never take its evictor's place
  by this rule, ``within-team`` never lets work take the place of its own team's work of the
  same priority, and no other team's rule reaches inside a team.  So no two jobs evict each
  other, and nothing evicted by this rule is replaced by a job that would hold the GPUs longer.
* Protected work is never taken, nor a job kept to completion (``non_resumable:
  run_to_completion``): the victim filters every class shares.
* Bounded thrash (issue 25): a non-resumable job that was evicted once is never taken again
  (``thrown_away_once``, shared with ``within-team``) -- it restarts from zero each time, and a
  debug stream threw a 40-minute job away 24 times (31.5 GPU-h, 6x its work); nor a job whose
  place the debug job would leave mostly idle (more than half a node's GPUs freed beyond the debug job's own): a 12 h, 8-GPU run evicted
  by a 1-GPU debug job waited hours to restart while 7 of its GPUs sat idle.
"""

from __future__ import annotations

from allotment.core.preemption.thrown_away_once import may_throw_away
from allotment.core.state import Run

RULE = "debug-slice"
WHY = "same within-team priority as {job}, a debug job that ends first"


def may_take(end: float, declared: int, gpus: int, node_gpus: int, r: Run) -> bool:
    """May a debug job of ``gpus`` GPUs and declared priority ``declared``, expected to end at
    ``end`` if it starts now, take the place of its own team's running job ``r`` (already past
    its protection), on nodes of ``node_gpus`` GPUs?"""
    return (r.declared == declared and end < r.est_end and may_throw_away(r)
            and 2 * (r.gpus - gpus) <= node_gpus)
