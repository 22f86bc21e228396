"""The event log is complete: every metric of ``--json`` is recomputed from it alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.cli.main import main
from allotment.compile.model import CompiledConfig
from allotment.sim.events import EVENT_KINDS, Event, event_from_json, metrics_from_events, read_log
from allotment.sim.runner import simulate
from allotment.traces.scenarios.ai2 import generate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.strategies import clusters, workloads


@st.composite
def cases(draw: st.DrawFn) -> tuple[CompiledConfig, Workload]:
    config = draw(clusters())
    return config, draw(workloads(config))


def _through_json(events: tuple[Event, ...]) -> list[Event]:
    """What a reader of the file gets back: each event written as a JSON line and parsed."""
    return [event_from_json(json.loads(json.dumps(e.to_json()))) for e in events]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(["budgets", "priority", "fifo"]), st.sampled_from([None, 0.1]))
def test_metrics_recomputed_from_the_event_log_equal_the_simulators(
    case: tuple[CompiledConfig, Workload], policy: str, days: float | None
) -> None:
    config, workload = case
    r = simulate(config, workload, days=days, policy=policy, keep_events=True)
    assert r.header is not None
    assert metrics_from_events(r.header, _through_json(r.events)) == r.metrics


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_events_come_in_time_order_and_each_job_starts_only_after_its_submit(
    case: tuple[CompiledConfig, Workload],
) -> None:
    config, workload = case
    events = simulate(config, workload, keep_events=True).events
    assert [e.t for e in events] == sorted(e.t for e in events)
    assert {e.event for e in events} <= set(EVENT_KINDS)
    seen: set[str] = set()
    running: set[str] = set()
    for e in events:
        if e.event == "submit":
            seen.add(e.job or "")
        elif e.event == "start":
            assert e.job in seen and e.job not in running
            running.add(e.job or "")
            assert sum(e.node_gpus or ()) == e.gpus
        elif e.event in ("preempt", "end"):
            assert e.job in running
            running.discard(e.job or "")
    assert not running  # without a horizon every job ends


def test_the_ai2_scenario_log_reproduces_its_metrics_for_every_policy() -> None:
    config = make_config({"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}, nodes=16)
    w = generate(config, cluster="c1", days=1.5, seed=3)
    for policy in ("budgets", "priority", "fifo"):
        r = simulate(config, w, days=1.5, policy=policy, keep_events=True)
        assert r.header is not None
        assert metrics_from_events(r.header, _through_json(r.events)) == r.metrics, policy


def test_simulate_events_file_reproduces_the_json_metrics(repo_root: Path, tmp_path: Path) -> None:
    """The bundled config (maintenance, boosts, 1,024 GPUs) for one day, through the CLI."""
    ev, out = tmp_path / "events.jsonl", tmp_path / "m.json"
    code = main(["simulate", "--repo", str(repo_root), "--scenario", "ai2", "--days", "1", "--seed", "2",
                 "--events", str(ev), "--json", str(out)])
    assert code == 0
    header, events = read_log(ev)
    assert metrics_from_events(header, events) == json.loads(out.read_text())
    first = json.loads(ev.read_text().splitlines()[1])
    assert first["event"] == "submit" and set(first) >= {"t", "job", "account", "gpus"}


def test_a_log_without_its_header_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "e.jsonl"
    p.write_text('{"t":0,"event":"submit","job":"a","account":"x","gpus":1}\n')
    with pytest.raises(ValueError, match="header"):
        read_log(p)
