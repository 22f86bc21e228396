"""Issue 27, item 4: the metrics keep a job object only while the job is alive.  Every job ever
submitted stayed in ``Recorder.jobs`` to the end of the run (about 300 bytes a job with its id,
most of a long run's metric memory); a job that has ended, been cancelled or rejected now leaves
only its wait facts (``sim/settled.py``), and the waits come out the same, job for job."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig
from allotment.sim import runner
from allotment.sim.events import Event, metrics_from_events
from allotment.sim.runner import simulate
from allotment.sim.summary import waits
from allotment.traces.scenarios.ai2 import generate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.strategies import clusters, workloads


@st.composite
def cases(draw: st.DrawFn) -> tuple[CompiledConfig, Workload]:
    config = draw(clusters())
    return config, draw(workloads(config))


def _alive(counts: dict[str, int]) -> int:
    return counts["submitted"] - counts["completed"] - counts["cancelled"] - counts["rejected"]


def test_the_recorder_holds_only_the_jobs_still_alive_at_the_end() -> None:
    config = make_config({"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}, nodes=16)
    w = generate(config, cluster="c1", days=1.5, seed=3)
    r = simulate(config, w, days=1.5, keep_events=True)
    rec = r.recorder
    assert r.metrics["jobs"]["completed"] > 100
    assert len(rec.jobs) == _alive(r.metrics["jobs"])
    assert len(rec.settled) == r.metrics["jobs"]["submitted"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(["budgets", "priority", "fifo"]), st.sampled_from([None, 0.1]))
def test_settled_jobs_give_the_waits_of_every_job_in_submit_order(
    case: tuple[CompiledConfig, Workload], policy: str, days: float | None
) -> None:
    """The lists behind the wait percentiles, element for element, as the plain definition over
    the log lists them (every job kept, in submit order), for the whole run and after a warm-up."""
    config, workload = case
    r = simulate(config, workload, days=days, policy=policy, keep_events=True)
    assert r.header is not None and r.events is not None
    assert len(r.recorder.jobs) == _alive(r.metrics["jobs"])
    end = r.header.end
    for start in (0.0, 3600.0):
        first, pending, _, _ = waits(r.recorder, end, start)
        assert (list(first["all"]), list(pending["all"])) == _plain_waits(r.events, end, start)
    assert metrics_from_events(r.header, r.events) == r.metrics


def _plain_waits(events: tuple[Event, ...], end: float, start: float) -> tuple[list[float], list[float]]:
    """First-start wait and total pending time of every job eligible in [start, end) and not
    rejected, in submit order: docs/metrics.md's definitions, read off the log directly."""
    jobs: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    for e in events:
        job = jobs.get(e.job or "")
        if e.event == "submit":
            t = None if e.held else e.t
            job = jobs[e.job or ""] = {"eligible": t, "since": t, "first": None, "total": 0.0, "rejected": False}
            order.append(job)
        elif job is None:
            continue
        elif e.event == "eligible":
            job["eligible"] = job["since"] = e.t
        elif e.event == "reject":
            job["rejected"], job["since"] = True, None
        elif e.event == "start":
            if job["since"] is not None:
                job["total"] += e.t - job["since"]
                job["since"] = None
            if job["first"] is None:
                job["first"] = e.t
        elif e.event == "preempt" and e.requeued:
            job["since"] = e.t
    first, pending = [], []
    for j in order:
        if j["eligible"] is None or not start <= j["eligible"] < end or j["rejected"]:
            continue
        first.append((j["first"] if j["first"] is not None else end) - j["eligible"])
        pending.append(j["total"] + (end - j["since"] if j["since"] is not None else 0.0))
    return first, pending


@pytest.mark.skipif(runner.__file__.endswith(".so"),
                    reason="the summary is a native call from the compiled runner: no monkeypatch reaches it")
def test_the_runs_scheduler_is_gone_before_the_summary_lists_the_waits(monkeypatch: Any) -> None:
    """The summary's lists of waits (about 100 bytes a job) were built while the run's core
    state was still held, 21 MiB above the run's own peak at 90 days of ``ai2`` (issue 27 item
    4); ``simulate`` lets the run go first, so the lists reuse its memory."""
    import gc

    from allotment.core.scheduler import Scheduler
    from allotment.sim import metrics

    def alive() -> int:
        return sum(1 for o in gc.get_objects() if isinstance(o, Scheduler))

    seen: list[int] = []
    summarize = metrics.summarize

    def counting(rec: Any) -> dict[str, Any]:
        seen.append(alive())
        return summarize(rec)

    monkeypatch.setattr(metrics, "summarize", counting)
    config = make_config({"lm": 2, "vision": 1}, nodes=4)
    w = generate(config, cluster="c1", days=0.2, seed=1)
    gc.collect()
    before = alive()
    r = simulate(config, w, days=0.2)
    assert r.metrics["jobs"]["completed"] > 0
    assert seen == [before]
