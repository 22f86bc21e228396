"""``allot replay`` as a user meets it without a cluster: bad flags exit 2 before anything runs;
``--from-events --compare`` judges a saved replay log against a fresh simulation (exit 0 when
every target holds, 1 when one is missed)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.compile.compiler import compile_repo
from allotment.reconcile.replay.events import write_events
from allotment.reconcile.replay.read_times import write_reads
from allotment.reconcile.replay.simlog import simulated_events
from allotment.sim.latency import parse_profile
from allotment.sim.workloads import from_trace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fidelity")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts/fidelity_workload.py"), str(out)], check=True
    )
    return out


def _argv(w: Path, *extra: str) -> list[str]:
    return ["replay", "--trace", str(w / "trace.jsonl"), "--repo", str(w / "repo"), *extra]


def test_bad_flags_exit_2_before_anything_runs(
    workload: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(workload, "--speedup", "0")) == 2
    assert main(_argv(workload, "--compare", "pbs")) == 2
    assert main(_argv(workload, "--compare", "slurm-test", "--speedup", "4")) == 2
    assert "unknown profile 'pbs'" in capsys.readouterr().err


def test_a_saved_log_is_judged_against_the_simulation(
    workload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = compile_repo(workload / "repo", dt.date(2026, 12, 1))
    events = simulated_events(
        config, "gpulab", from_trace(workload / "trace.jsonl"), parse_profile("slurm-test")
    )
    same = tmp_path / "same.jsonl"
    write_events(same, events)
    assert main(_argv(workload, "--from-events", str(same), "--compare", "slurm-test")) == 0
    assert "0 of " in capsys.readouterr().out
    late = tmp_path / "late.jsonl"  # every job starts 60 s late: waits miss their targets
    write_events(
        late,
        [replace(e, t=e.t + 60) if e.event in ("start", "end", "preempt") else e for e in events],
    )
    assert main(_argv(workload, "--from-events", str(late), "--compare", "slurm-test")) == 1
    assert "wait p50 debug" in capsys.readouterr().out


def test_a_log_simulated_at_an_epoch_phase_is_judged_at_that_phase(
    workload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cluster's fair-share epochs sat 100 s before the replay's time 0: the simulation
    shifted by that phase matches the log, and it differs from the one at phase 0 (the first
    epoch ends at trace time 200 instead of 300, so ranks move at another time)."""
    config = compile_repo(workload / "repo", dt.date(2026, 12, 1))
    work, profile = from_trace(workload / "trace.jsonl"), parse_profile("slurm-test")
    shifted = simulated_events(config, "gpulab", work, profile, epoch_phase_s=100.0)
    assert shifted != simulated_events(config, "gpulab", work, profile)
    assert min(e.t for e in shifted) == min(j.submit for j in work.jobs)  # moved back
    log = tmp_path / "phase.jsonl"
    write_events(log, shifted)
    judge = _argv(workload, "--from-events", str(log), "--compare", "slurm-test")
    assert main([*judge, "--epoch-phase", "100"]) == 0
    assert "0 of " in capsys.readouterr().out


def test_a_bad_saved_log_is_exit_2_with_each_line_named(
    workload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": 0, "event": "submit", "job": "a"}\n{"t": -1, "event": "end"}\n{"t"\n')
    assert main(_argv(workload, "--from-events", str(bad), "--compare", "slurm-test")) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:2: t must be 0 or more, got -1" in err
    assert f"{bad}:3:5: not valid JSON" in err
    assert "Traceback" not in err


def test_with_the_replays_reads_the_gate_judges_the_passes_as_run(
    workload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30: a log simulated with the passes where the ticks really read (one tick in ten
    skipped, the rest 0.4 s late) passes the gate judged at those reads, while the nominal
    profile's table, printed beside it for information, may miss."""
    config = compile_repo(workload / "repo", dt.date(2026, 12, 1))
    reads = tuple(round(2.0 * k + 1.3, 3) for k in range(400) if k % 10 != 3)
    nominal = parse_profile("slurm-test")
    log = tmp_path / "real.jsonl"
    write_events(log, simulated_events(config, "gpulab", from_trace(workload / "trace.jsonl"),
                                       nominal.as_run(reads)))
    write_reads(tmp_path / "reads.json", reads)
    judge = _argv(workload, "--from-events", str(log), "--compare", "slurm-test")
    assert main([*judge, "--reads", str(tmp_path / "reads.json")]) == 0
    out = capsys.readouterr().out
    assert "nominal profile (information, not gated)" in out and "passes at the 360 reads" in out
    assert out.rstrip().endswith("fidelity: 0 of 18 targets missed")
    assert main([*judge, "--reads", str(tmp_path / "nothing.json")]) == 2
    assert main(_argv(workload, "--reads", str(tmp_path / "reads.json"), "--compare", "slurm-test")) == 2
