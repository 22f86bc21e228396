"""What kind a job is, by the policy: the one definition every view of waits reads
(``metrics.json``, the ``allot simulate`` summary, ``allot report``, the plan comment;
docs/metrics.md, "Job kinds").

The simulator decides it once, when the job is submitted, and writes it on the ``submit`` event
(``sim.eventlog``), so a saved log carries it and no view decides it again.  In order:

1. **debug** by the policy's debug rule (``core.debug``: a minimum runtime above 0 and at most
   ``debug_threshold``, on one node) -- what the scheduler itself treats as debug work, whatever
   the trace's label says;
2. **interactive** when the policy's interactive class recognises it (``compile.interactive``);
3. else its declared kind when that is ``train``, ``batch`` or ``inference``; a job labelled
   ``debug`` or ``interactive`` that the policy does not treat as such counts as ``batch``
   (the trace's default kind), so a label alone never moves a job into a class.
"""

from __future__ import annotations

from typing import Final

from allotment.compile.interactive import InteractiveClass
from allotment.core.debug import is_debug

# the kinds a wait is reported for, in the order every view lists them
JOB_KINDS: Final = ("debug", "interactive", "train", "batch", "inference")
_DECLARED_ONLY: Final = frozenset({"train", "batch", "inference"})
DEFAULT_KIND: Final = "batch"


def job_kind(
    declared: str | None,
    min_runtime: float,
    gpus: int,
    *,
    debug_threshold_s: float,
    node_gpus: int,
    interactive: InteractiveClass | None,
) -> str:
    """The kind of a job with this declared kind, minimum runtime (after the policy's default and
    cap) and GPU count, on a cluster whose largest node holds ``node_gpus``.  ``interactive``
    None: the policy's class is unknown (an event log from before job kinds were logged)."""
    if is_debug(min_runtime, gpus, debug_threshold_s, node_gpus):
        return "debug"
    if interactive is not None and interactive.recognises(declared, gpus=gpus):
        return "interactive"
    return declared if declared in _DECLARED_ONLY else DEFAULT_KIND
