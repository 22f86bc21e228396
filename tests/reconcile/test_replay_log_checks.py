"""Issue 32, item 9: ``allot replay --from-events`` refuses a log no replay of the trace could
have written, at ``file:line``, all at once, exit 2, before simulating.  A job not in the trace
was a ``KeyError`` traceback; an end before any start, a start twice, 1e30 GPUs and an unknown
account were accepted and compared."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.reconcile.replay.events import Event, write_events
from allotment.reconcile.replay.simlog import simulated_events
from allotment.sim.latency import parse_profile
from allotment.sim.workloads import from_trace
from tests.reconcile.test_replay_cli import _argv, workload  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def good(workload: Path) -> list[Event]:  # noqa: F811
    config = compile_repo(workload / "repo", dt.date(2026, 12, 1))
    work = from_trace(workload / "trace.jsonl")
    return sorted(simulated_events(config, "gpulab", work, parse_profile("slurm-test")),
                  key=lambda e: e.t)


def _run(w: Path, log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(_argv(w, "--from-events", str(log), "--compare", "slurm-test"))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.err.splitlines()


def test_a_log_no_replay_of_the_trace_could_write_is_refused_line_by_line(
    workload: Path, good: list[Event], tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    start = next(e for e in good if e.event == "start" and e.job)
    end = next(e for e in good if e.event == "end" and e.job == start.job)
    bad = [
        replace(start, job="no-such-job"),  # 1
        Event(t=0.0, event="end", job=start.job, account=start.account, gpus=start.gpus),  # 2
        start,  # 3
        replace(start, t=start.t + 1),  # 4: a start twice
        replace(end, t=end.t + 2),  # 5
        replace(start, t=end.t + 3, gpus=10**30),  # 6
        replace(start, event="submit", t=end.t + 4, account="nosuch"),  # 7
    ]
    log = tmp_path / "bad.jsonl"
    log.write_text("".join(e.line() + "\n" for e in bad))
    code, err = _run(workload, log, capsys)
    assert code == 2
    assert err == [
        f"{log}:1:1: job 'no-such-job' is not in the trace",
        f"{log}:2:1: end of job {start.job!r}, which is not running (no start before)",
        f"{log}:4:1: job {start.job!r} starts again without a preempt or end since",
        f"{log}:6:1: 1,000,000,000,000,000,000,000,000,000,000 GPUs is more than the cluster's 32",
        f"{log}:7:1: unknown account 'nosuch': no budget leaf on this cluster",
    ], err


def test_a_replays_own_log_still_reads(
    workload: Path, good: list[Event], tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    log = tmp_path / "good.jsonl"
    write_events(log, good)
    code, _ = _run(workload, log, capsys)
    assert code == 0
    assert json.loads(log.read_text().splitlines()[0])
