"""Where a simulation's workload comes from: a built-in scenario or a canonical trace file.

Shared by ``allot simulate``, ``allot explain`` and the benchmarks so that ``--scenario ai2`` and
``--trace`` of the same generated file go through the very same code.  ``allot simulate
--trace`` streams the file (``stream_trace``): the run holds the jobs alive, not the trace."""

from __future__ import annotations

from pathlib import Path

from allotment.compile.model import CompiledConfig
from allotment.config.bulk import bulk_allocation
from allotment.errors import TraceError
from allotment.traces.canonical import read_trace
from allotment.traces.job_fit import job_fit, never_run
from allotment.traces.scenarios import get_scenario
from allotment.traces.scenarios.workload import Workload
from allotment.traces.trace_stream import FileJobs, trace_stream


def from_scenario(config: CompiledConfig, name: str, *, cluster: str, days: float, seed: int) -> Workload:
    """The scenario's workload, drawn in bulk (``config.bulk``): a job spec an arrival, and the
    cyclic collector, left on, rescanned every spec drawn so far at each full collection."""
    with bulk_allocation():
        return get_scenario(name)(config, cluster=cluster, days=days, seed=seed)


def from_trace(path: str | Path, config: CompiledConfig | None = None, cluster: str | None = None) -> Workload:
    """Read ``path``; with ``config``, every job must also replay on ``cluster`` of it (the very
    checks of ``allot trace check --repo``: known leaf account and GPU type, fits the cluster)."""
    fit = None if config is None else job_fit(config, cluster)
    trace = read_trace(path, display_name=str(path), fit=fit)
    if fit is not None and (stuck := never_run(fit, trace.jobs, trace.node_events)):
        raise TraceError("\n".join(f"{path}: {why}" for why in stuck))
    return Workload.of(trace.jobs, trace.node_events)


def stream_trace(path: str | Path, config: CompiledConfig, cluster: str | None = None) -> FileJobs:
    """``from_trace``'s checks, then the jobs read from the file as the run reaches them
    (``traces.trace_stream``): what ``allot simulate --trace`` replays (issue 32, item 5)."""
    return trace_stream(path, fit=job_fit(config, cluster), display_name=str(path))
