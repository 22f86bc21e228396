"""A replay the machine stopped is void, neither passed nor failed (issue 30, docs/fidelity.md
the eighth pass): judged on saved replays of the ``arbitrary`` workload (seed 9: no read for
16.6 s mid-run; seeds 10 and 3: clean runs; seed 11: clean, with its scripts' own seconds)
and on synthetic stamps."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.reconcile.replay.collect import ScriptTime
from allotment.reconcile.replay.events import read_events
from allotment.reconcile.replay.read_times import read_reads
from allotment.reconcile.replay.stalls import (
    EXIT_VOID,
    origin_from,
    read_stalls,
    read_stamps,
    replay_stalls,
    script_stalls,
    void_line,
    widest_gaps,
)

ROOT = Path(__file__).resolve().parents[2]
SAVED = Path(__file__).parent / "replays"
TICK_S = 2.0  # the fidelity workload's reconcile interval


def test_the_saved_seed_9_replay_stopped_for_16_s_and_is_void() -> None:
    stalls = read_stalls(read_reads(SAVED / "arbitrary-9" / "reads.json"), TICK_S)
    assert [(s.who, s.after_s, s.until_s) for s in stalls] == [("reads", 210.971, 227.612)]
    line = void_line(stalls, TICK_S)
    assert line is not None and line.startswith("fidelity: VOID")
    assert "from 210.97 s to 227.61 s: 16.6 s, where a gap over 6 s is a stall" in line and "rerun" in line


@pytest.mark.parametrize("clean", ["arbitrary-10", "arbitrary-3"])
def test_a_clean_saved_replay_is_not_void_though_a_tick_skipped_its_slot(clean: str) -> None:
    reads = read_reads(SAVED / clean / "reads.json")
    events = read_events(SAVED / clean / "real.jsonl")
    assert replay_stalls(reads, events, None, TICK_S) == ()
    assert void_line((), TICK_S) is None


def test_a_late_tick_is_no_stall_but_two_skipped_slots_in_a_row_are() -> None:
    """Reads two intervals apart are one skipped slot, which the gate passes at; a gap over
    three intervals is the reconciler stopped for more than a tick beyond it."""
    assert read_stalls((0.9, 2.9, 6.95, 8.9), TICK_S) == ()
    assert [s.gap_s for s in read_stalls((0.9, 2.9, 9.0, 10.9), TICK_S)] == [pytest.approx(6.1)]


def _run(start: float, *beats: float, end: float | None = None) -> list[ScriptTime]:
    out = [ScriptTime("start", start), *(ScriptTime("beat", b) for b in beats)]
    return out + ([ScriptTime("end", end)] if end is not None else [])


def test_a_jobs_own_seconds_stopping_for_over_a_tick_is_a_stall_a_requeue_is_not() -> None:
    t0 = 1000.0
    clean = _run(1010.0, 1010.01, 1011.0, 1012.4, 1013.0, 1016.3, end=1017.0)  # 3.3 s: no stall
    stopped = _run(1010.0, 1010.01, 1011.0, 1015.2, 1015.3, end=1016.0)  # 4.2 s > 1.4 + 2
    requeued = _run(1010.0, 1010.01, 1011.0) + _run(1030.0, 1030.01, end=1031.0)
    no_beats = _run(1010.0, end=1050.0)  # a harness before the beats: a whole run apart
    stalls = script_stalls(
        {"a": clean, "b": stopped, "c": requeued, "d": no_beats}, t0, TICK_S
    )
    assert [(s.who, s.after_s, s.until_s, s.allowed_s) for s in stalls] == [
        ("b", 11.0, 15.2, 3.4)
    ]


def test_time_0_of_a_saved_replay_is_read_from_its_scripts_starts() -> None:
    events = read_events(SAVED / "arbitrary-10" / "real.jsonl")
    first = {}
    for e in sorted(events, key=lambda e: e.t):
        if e.event == "start" and e.job:
            first.setdefault(e.job, e.t)
    stamps = {job: (ScriptTime("start", 5000.0 + t),) for job, t in first.items()}
    stamps["f001"] = (ScriptTime("start", 9999.0),)  # one taken from sacct's second instead
    assert origin_from(events, stamps) == pytest.approx(5000.0)


def test_allot_replay_judging_the_saved_seed_9_says_void_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run([sys.executable, str(ROOT / "scripts/fidelity_workload.py"), str(tmp_path),
                    "--seed", "9", "--workload", "arbitrary"], check=True, capture_output=True)
    saved = SAVED / "arbitrary-9"
    argv = ["replay", "--trace", str(tmp_path / "trace.jsonl"), "--repo", str(tmp_path / "repo"),
            "--from-events", str(saved / "real.jsonl"), "--reads", str(saved / "reads.json"),
            "--compare", "slurm-test", "--epoch-phase", "134"]
    assert main(argv) == EXIT_VOID
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-1].startswith("fidelity: VOID, neither passed nor failed")
    assert "rerun" in out[-1]
    assert not any(line.startswith("fidelity: ") and "missed" in line and "(" not in line
                   for line in out), "a void replay printed a gated verdict"


def test_the_saved_seed_11_with_its_scripts_seconds_is_clean_until_one_job_stops() -> None:
    """Seed 11 (replayed blind, the CI seed) kept every script's beats: its widest gap is a
    second and a checkpoint write, no stall; shift one run's later stamps by 5 s, as a machine
    that stopped that job would, and the replay is void, naming the job."""
    saved = SAVED / "arbitrary-11"
    reads = read_reads(saved / "reads.json")
    events = read_events(saved / "real.jsonl")
    assert replay_stalls(reads, events, saved / "jobs", TICK_S) == ()
    read_gap, own = widest_gaps(reads, events, saved / "jobs")
    assert own is not None and 1.0 < own < 1.0 + 0.4 + TICK_S and read_gap < 3 * TICK_S
    stamps = read_stamps(saved / "jobs")
    origin = origin_from(events, stamps)
    assert origin is not None
    cut = stamps["f020"][len(stamps["f020"]) // 2].at
    stamps["f020"] = tuple(replace(x, at=x.at + 5.0) if x.at > cut else x for x in stamps["f020"])
    assert [s.who for s in script_stalls(stamps, origin, TICK_S)] == ["f020"]
