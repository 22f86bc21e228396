"""What a debug job is, by the policy (docs/metrics.md): a minimum runtime above 0 and at most
``debug_threshold``, and no more GPUs than one node holds -- never the trace's ``kind`` label.
One definition for the core (debug jobs may backfill reserved nodes and yield,
``core.reservation``; they may take the place of their own team's work of the same priority,
``core.preemption.debug_slice``) and for the metrics (``sim.metrics``).  A debug job that is also
short by its work (``is_short_debug``) is what may yield to a reservation
(``Starting.may_yield``) and pass a team's cap (``core.debug_overdraft``)."""

from __future__ import annotations


def is_debug(min_runtime: float, gpus: int, threshold_s: float, node_gpus: int) -> bool:
    """Is a job with this minimum runtime and GPU count a debug job under ``threshold_s`` on a
    cluster whose largest node holds ``node_gpus``?"""
    return 0.0 < min_runtime <= threshold_s and gpus <= node_gpus


def is_short_debug(min_runtime: float, gpus: int, work_left: float, threshold_s: float, node_gpus: int) -> bool:
    """Is it a debug job (``is_debug``) whose remaining work is within ``threshold_s`` too?  A
    10-minute protection on a 12-hour run is not debug work: a rule that lets debug work past a
    limit (a reservation's nodes, a team's cap) for its protection bounds what it gives or takes
    by the job's remaining work as well."""
    return is_debug(min_runtime, gpus, threshold_s, node_gpus) and work_left <= threshold_s
