"""A saved simulation: ``allot simulate ... --save DIR`` (format: docs/trace-format.md, "Run
directory").  ``allot explain/status/report --run DIR`` read it later, so it holds everything a
question about the run needs and nothing that needs a re-run: the compiled config, the exact
workload, the event log, the metrics and hourly fair-share samples.

Written atomically: every file goes into ``DIR.tmp`` first, which is then renamed to ``DIR``
(an existing ``DIR`` is moved aside and removed only after the rename), so a reader never sees a
half-written run directory."""

from __future__ import annotations

import heapq
import json
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allotment import __version__
from allotment.compile.model import CompiledConfig
from allotment.compile.render import to_json
from allotment.sim.event_file import read_events
from allotment.sim.events import dumps_line
from allotment.sim.fairshare_log import fairshare_samples
from allotment.sim.runner import SimResult
from allotment.traces.format import TraceItem, sort_key
from allotment.traces.job_stream import JobSource, every_job
from allotment.traces.scenarios.workload import Workload
from allotment.traces.writer import sorted_items, write_trace

RUN_FORMAT_VERSION = 1
FILES = ("meta.json", "compiled.json", "trace.jsonl", "events.jsonl", "metrics.json", "fairshare.jsonl")


@dataclass(frozen=True, slots=True)
class RunSource:
    """Where the workload came from, for meta.json: exactly one of scenario / trace is set."""

    scenario: str | None
    trace: str | None
    days: float | None
    t0: str  # ISO 8601 wall time of t = 0
    no_skip: bool = False
    overrides: Mapping[str, str] = field(default_factory=dict)  # --set KEY=VALUE, as given


def metrics_json(metrics: Mapping[str, Any]) -> str:
    """The one rendering of the metrics: ``--json`` and metrics.json are these bytes."""
    return json.dumps(metrics, indent=2, sort_keys=True) + "\n"


def meta(config: CompiledConfig, result: SimResult, src: RunSource) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format_version": RUN_FORMAT_VERSION,
        "allot_version": __version__,
        "config_sha256": config.inputs_sha256,
        "policy": result.policy,
        "cluster": result.cluster,
        "seed": result.metrics["seed"],
        "days": src.days,
        "t0": src.t0,
        "capacity_gpus": result.metrics["capacity_gpus"],
        "no_skip": src.no_skip,
    }
    if src.overrides:  # what explain must apply to score as the run did (the within-team mode...)
        out["set"] = dict(sorted(src.overrides.items()))
    if src.scenario is not None:
        out["scenario"] = src.scenario
    else:
        out["trace"] = src.trace
    return out


def _trace_header(result: SimResult, src: RunSource) -> dict[str, Any]:
    h: dict[str, Any] = {
        "source": f"scenario:{src.scenario}" if src.scenario is not None else f"trace:{src.trace}",
        "generator": "allot simulate --save",
        "seed": result.metrics["seed"],
        "start": src.t0,
        "cluster": result.cluster,
    }
    if src.days is not None:
        h["days"] = src.days
    return h


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines)


def trace_items(workload: Workload | JobSource) -> Iterable[TraceItem]:
    """The run's workload as trace lines in the canonical order; a stream is read once more
    (its jobs are in ``(submit, id)`` order, its node events sorted: merged, never held)."""
    if isinstance(workload, Workload):
        return sorted_items(workload.jobs, workload.node_events)
    merged: Iterator[TraceItem] = heapq.merge(every_job(workload), workload.node_events, key=sort_key)
    return merged


def save_run(
    path: Path, config: CompiledConfig, workload: Workload | JobSource, result: SimResult, src: RunSource, events: Path
) -> None:
    """Write the run directory ``path`` atomically (see the module docstring).  ``events`` is the
    run's event log, already written as it ran (``sim.event_file.EventFile``): copied, and read
    one event at a time for the fair-share samples, never held whole."""
    assert result.header is not None, "simulate() always returns its header"
    tmp = path.with_name(path.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)  # left by an interrupted save: never read as a run
    tmp.mkdir(parents=True)
    try:
        (tmp / "meta.json").write_text(json.dumps(meta(config, result, src), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        (tmp / "compiled.json").write_text(to_json(config), encoding="utf-8")
        write_trace(tmp / "trace.jsonl", trace_items(workload), header=_trace_header(result, src))
        shutil.copyfile(events, tmp / "events.jsonl")
        (tmp / "metrics.json").write_text(metrics_json(result.metrics), encoding="utf-8")
        samples = fairshare_samples(result.context, result.header, read_events(events))
        _write_lines(tmp / "fairshare.jsonl", (dumps_line(s) for s in samples))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = path.with_name(path.name + ".old")
    if path.exists():
        if old.exists():
            shutil.rmtree(old)
        path.rename(old)
    tmp.rename(path)
    if old.exists():
        shutil.rmtree(old)
