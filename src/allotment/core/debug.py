"""What a debug job is, by the policy (docs/metrics.md): a minimum runtime above 0 and at most
``debug_threshold``, and no more GPUs than one node holds -- never the trace's ``kind`` label.
One definition for the core (debug jobs may backfill reserved nodes and yield,
``core.reservation``; they may take the place of their own team's work of the same priority,
``core.preemption.debug_slice``) and for the metrics (``sim.metrics``)."""

from __future__ import annotations


def is_debug(min_runtime: float, gpus: int, threshold_s: float, node_gpus: int) -> bool:
    """Is a job with this minimum runtime and GPU count a debug job under ``threshold_s`` on a
    cluster whose largest node holds ``node_gpus``?"""
    return 0.0 < min_runtime <= threshold_s and gpus <= node_gpus
