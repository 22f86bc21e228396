"""Deadlines missed (docs/metrics.md, "Deadlines") on a run small enough to work out by hand.

One team on one 8-GPU node, passes every 10 s, every job protected for its whole run (no
preemption), horizon 2 h (7200 s)."""

from __future__ import annotations

import json

from allotment.core.jobs import JobSpec
from allotment.sim.events import event_from_json, metrics_from_events
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


def _job(jid: str, submit: float, work: float, deadline: float | None, *deps: str) -> JobSpec:
    return JobSpec(id=jid, submit=submit, account="a", gpus=8, work=work, min_runtime=work, deadline=deadline,
                   depends_on=deps)


def _run() -> SimResult:
    jobs = [
        _job("A", 0.0, 1000.0, 3000.0),  # 0-1000: met
        _job("B", 100.0, 1000.0, 1500.0),  # waits for A, 1000-2000: ended late
        _job("N", 2500.0, 100.0, None),  # no deadline: not counted
        _job("C", 5000.0, 10_000.0, 6000.0),  # runs past the horizon, deadline before it: unfinished, missed
        _job("D", 6000.0, 100.0, 9000.0, "C"),  # held for C, deadline after the horizon: not missed yet
        _job("E", 8000.0, 100.0, 8500.0),  # submitted after the horizon: not in the run
    ]
    return simulate(make_config({"a": 1}, nodes=1), Workload.of(jobs), days=2 / 24, keep_events=True)


def test_a_deadline_is_missed_by_ending_after_it_or_not_ending_before_the_run_does() -> None:
    m = _run().metrics
    assert m["deadlines"] == {"jobs": 4, "met": 1, "late": 1, "unfinished": 1, "missed": 2}


def test_the_event_log_alone_gives_the_same_count() -> None:
    """The deadline is written on the submit event, so a saved log reproduces the figure."""
    r = _run()
    assert r.events is not None and r.header is not None
    lines = [json.loads(json.dumps(e.to_json())) for e in r.events]
    assert [d.get("deadline") for d in lines if d["event"] == "submit"] == [3000.0, 1500.0, None, 6000.0, 9000.0]
    assert metrics_from_events(r.header, [event_from_json(d) for d in lines])["deadlines"] == r.metrics["deadlines"]
