"""Issue 32, item 5: ``allot simulate --trace`` reads the trace as the run reaches its jobs, so
memory follows the jobs alive at once, not the file (a 1M-job trace passed 1.19 GB read whole);
and a trace read that way replays exactly as the same trace read whole."""

from __future__ import annotations

import datetime as dt
import gc
import json
import random
from pathlib import Path
from typing import Any

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.core.jobs import JobSpec
from allotment.sim import runner
from allotment.sim.events import Event
from allotment.sim.runner import simulate
from allotment.sim.workloads import from_trace
from tests.conftest import REPO_ROOT

TEAMS = ("red-team", "tulu", "molmo", "scaling")


def _short_jobs(path: Path, n: int) -> None:
    """``n`` independent short jobs on the h100 cluster, a few alive at any time."""
    rnd, t = random.Random(7), 0.0
    with path.open("w") as f:
        for i in range(n):
            t += rnd.random() * 60
            job = {"id": f"j{i:05d}", "submit": round(t, 3), "account": rnd.choice(TEAMS),
                   "gpus": rnd.choice([1, 2, 4, 8]), "work": rnd.randrange(60, 600)}
            f.write(json.dumps(job) + "\n")


def _alive() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is JobSpec)


def test_simulate_trace_holds_the_jobs_alive_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    _short_jobs(path, 3_000)
    before = _alive()
    most = 0
    seen = 0
    plain = runner.simulate

    def counting(*args: Any, **kw: Any) -> Any:
        def on_event(e: Event) -> None:  # how many jobs exist anywhere, every 100 submits
            nonlocal most, seen
            if e.event == "submit":
                seen += 1
                if seen % 100 == 0:
                    most = max(most, _alive() - before)

        assert kw.get("on_event") is None
        return plain(*args, **kw, on_event=on_event)

    monkeypatch.setattr(runner, "simulate", counting)
    out = tmp_path / "m.json"
    assert main(["simulate", "--trace", str(path), "--repo", str(REPO_ROOT), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["jobs"]["completed"] == 3_000
    assert seen == 3_000
    assert most <= 300, f"{most} of the 3,000 jobs were held at once"


def _mixed(path: Path) -> None:
    """Ties in submit time written out of id order, dependencies on earlier and later lines,
    within and across teams, raised priorities, node events, and gangs the red team's cap never
    lets run (rejected, and so are the jobs that wait for them)."""
    rnd = random.Random(3)
    lines: list[dict[str, object]] = [{"type": "node", "time": 50, "node": "h100-n001", "state": "unhealthy"},
                                      {"type": "node", "time": 900, "node": "h100-n001", "state": "healthy"}]
    jobs: list[dict[str, object]] = []
    t = 0.0
    for i in range(400):
        if rnd.random() < 0.7:
            t += rnd.choice([0.0, 5.0, 17.5])
        job: dict[str, object] = {"id": f"x{rnd.randrange(10**6):06d}-{i}", "submit": t,
                                  "account": rnd.choice(TEAMS), "gpus": rnd.choice([1, 4, 8, 16, 64]),
                                  "work": rnd.randrange(60, 4_000), "priority": rnd.choice([0, 0, 1, 5])}
        if job["gpus"] in (16, 64):
            job["gpus_per_node"] = 8
        jobs.append(job)
    for job in jobs:
        if rnd.random() < 0.25:
            other = jobs[rnd.randrange(len(jobs))]
            if other is not job:
                job["depends_on"] = [other["id"]]
    # no cycles: keep only edges to a job with a smaller index
    index = {j["id"]: k for k, j in enumerate(jobs)}
    for k, job in enumerate(jobs):
        deps = [d for d in job.get("depends_on", []) if index[d] > k]  # type: ignore[attr-defined]
        if deps:
            job["depends_on"] = deps
        else:
            job.pop("depends_on", None)
    items = sorted([*lines, *jobs], key=lambda x: (x.get("time", x.get("submit")), 0 if "node" in x else 1))
    path.write_text("".join(json.dumps(x) + "\n" for x in items))


def test_a_streamed_trace_replays_exactly_as_the_trace_read_whole(tmp_path: Path) -> None:
    from allotment.sim.workloads import stream_trace  # new with the fix: here, not at the top,
    # so that the memory test above fails on the code before it by its own assertion

    path = tmp_path / "t.jsonl"
    _mixed(path)
    config = compile_repo(REPO_ROOT, dt.date(2026, 11, 30))
    whole = simulate(config, from_trace(path, config, "h100"), cluster="h100", keep_events=True)
    streamed = simulate(config, stream_trace(path, config, "h100"), cluster="h100", keep_events=True)
    assert whole.events is not None
    assert {"eligible", "drain", "reject"} <= {e.event for e in whole.events}
    assert any(e.event == "reject" and "rejected" in (e.reason or "") for e in whole.events)
    assert streamed.events == whole.events
    assert streamed.metrics == whole.metrics
