"""Which running jobs yield to a reservation (``Start.yields``), carried from tick to tick.

The flag is the core's, not the backend's: a debug job the core starts as backfill on GPUs a
reservation holds yields them back after its minimum runtime.  Slurm cannot hold it, so the
reconciler keeps it (``memory_file``) and hands it to every snapshot (``active.snapshot``).  It
belongs to the run the core started, and a run is the start decision the backend carried out.

Which one that was is not always the last: a start Slurm had not launched by the next tick's
read is pending in it, and that tick decides it again, maybe elsewhere.  If Slurm launched the
first decision before the second one's update landed, that update finds the job running
(``unchanged``), and the run is the first decision's, on its nodes, with its flag (the fidelity
gate on seed 11, 2026-12-07: f016 was started at one tick on n4 inside a 16-GPU job's
reservation, yielding; the next tick read it pending and decided it on n1, which had emptied,
not yielding; Slurm had already run it on n4.  The rule before this one dropped the flag of a
job seen pending and took each start's own, so f016 sat in the reservation as a run that would
not yield, the core placed the next debug job on reserved GPUs beside it where the simulator,
which kept the flag, preempted unallocated work instead, and the 16-GPU job started 10 s
later than predicted; docs/fidelity.md, the tenth pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Set

from allotment.core.decisions import Start


def kept_yields(
    before: Set[str], running: Set[str], starts: Iterable[Start], launched_before: Set[str]
) -> set[str]:
    """The jobs whose run yields after this tick.  ``before``: the flags kept so far;
    ``running``: the jobs running at this tick's read; ``starts``: this tick's start
    decisions; ``launched_before``: the jobs whose start update found them running already
    (the backend's ``unchanged``: an earlier decision's run).

    * A start that landed (any outcome but ``launched_before``) sets the job's flag to its own.
    * A start that found the job running changes nothing: the run and its flag are the
      earlier decision's.
    * Any other job keeps its flag while it runs; one not running (requeued, ended) loses it.
    """
    own = {s.job_id: s.yields for s in starts if s.job_id not in launched_before}
    kept = {j for j in before if (j in running or j in launched_before) and j not in own}
    return kept | {j for j, y in own.items() if y}
