"""Where a simulation's workload comes from: a built-in scenario or a canonical trace file.

Shared by ``allot simulate``, ``allot explain`` and the benchmarks so that ``--scenario ai2`` and
``--trace`` of the same generated file go through the very same code."""

from __future__ import annotations

from pathlib import Path

from allotment.compile.model import CompiledConfig
from allotment.traces.canonical import read_trace
from allotment.traces.scenarios import get_scenario
from allotment.traces.scenarios.workload import Workload


def from_scenario(config: CompiledConfig, name: str, *, cluster: str, days: float, seed: int) -> Workload:
    return get_scenario(name)(config, cluster=cluster, days=days, seed=seed)


def from_trace(path: str | Path) -> Workload:
    trace = read_trace(path)
    return Workload.of(trace.jobs, trace.node_events)
