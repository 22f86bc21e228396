"""The replay keeps when its ticks read the cluster (issue 30): trace seconds, and a bad
``reads.json`` is a usage error, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.errors import UsageError
from allotment.reconcile.replay.read_times import as_ran, read_reads, trace_reads, write_reads
from allotment.sim.latency import PROFILES

PROFILES_SLURM_TEST = PROFILES["slurm-test"]


def test_reads_are_kept_in_trace_seconds_from_time_0_and_read_back(tmp_path: Path) -> None:
    wall = [999.2, 1000.93, 1003.1, 1002.91]  # the policy tick before time 0 is not a pass
    reads = trace_reads(wall, 1000.0, 1.0)
    assert reads == (0.93, 2.91, 3.1)
    write_reads(tmp_path / "reads.json", reads)
    assert read_reads(tmp_path / "reads.json") == reads


@pytest.mark.parametrize("text", ["", "[1, 2]", '{"reads_s": [3, 1]}', '{"reads_s": ["x"]}',
                                  '{"reads_s": [-1]}'])
def test_a_file_that_is_not_a_replays_reads_is_refused_as_usage(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "reads.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match="--reads"):
        read_reads(bad)


def test_the_gates_profile_launches_at_the_replays_run_starts() -> None:
    from allotment.reconcile.replay.events import Event
    from allotment.sim.latency import PROFILES, RunStart

    events = [Event(1.5, "start", "a", "t", 1, 1, True), Event(1.0, "submit", "a", "t", 1, None, True),
              Event(0.5, "start", "b", "t", 1, 1, True), Event(3.5, "end", "a", "t", 1)]
    p = as_ran(PROFILES["slurm-test"], (0.9, 2.9), events)
    assert p.reads == (0.9, 2.9) and p.launches == (RunStart("b", 0.5), RunStart("a", 1.5))
    assert p.launch_after("a", 0.9) == pytest.approx(0.6) and p.launch_after("a", 2.9) == pytest.approx(0.8)
    assert p.launch_after("a", 0.0) == pytest.approx(0.8)  # 1.5 is after the next read, 0.9


def test_a_read_whose_tick_started_a_job_submitted_just_after_it_is_moved_past_the_submission() -> None:
    """Issue 30, seed 7: the read is stamped before ``squeue`` runs; the tick at 136.5 (read
    stamped 136.896) started f029, submitted at 136.902, so its snapshot held f029 and the
    gate's pass sits just after the submission.  A start decided at another tick moves nothing."""
    from allotment.reconcile.replay.events import Event

    events = [Event(136.902, "submit", "f029", "t", 1, None, True),
              Event(137.5, "start", "f029", "t", 1, 1, True, decided=136.5),
              Event(130.0, "submit", "f001", "t", 1, None, True),
              Event(140.5, "start", "f001", "t", 1, 1, True, decided=138.5)]
    p = as_ran(PROFILES_SLURM_TEST, (134.884, 136.896, 138.912), events)
    assert p.reads == (134.884, 136.903, 138.912)
    assert p.launch_after("f029", 136.903) == pytest.approx(137.5 - 136.903)


def test_a_read_whose_tick_resumed_a_node_is_moved_past_the_nodes_return() -> None:
    """Issue 30, seed 8: n4 came back at 218.9; the tick at 218.5 (``squeue`` read stamped
    218.884) resumed it, reading the health file after ``squeue``, and started f011 on it:
    the gate's pass at that tick sees n4 back.  A return the tick did not act on moves nothing."""
    from allotment.core.jobs import NodeEvent
    from allotment.reconcile.replay.events import Event

    back = (NodeEvent(148.5, "n4", "unhealthy"), NodeEvent(218.9, "n4", "healthy"))
    events = [Event(148.5, "drain", node="n4"), Event(218.5, "resume", node="n4")]
    reads = (146.9, 148.9, 216.868, 218.884, 220.863)
    assert as_ran(PROFILES_SLURM_TEST, reads, events, back).reads == (146.9, 148.9, 216.868, 218.901, 220.863)
    assert as_ran(PROFILES_SLURM_TEST, reads, events[:1], back).reads == reads
