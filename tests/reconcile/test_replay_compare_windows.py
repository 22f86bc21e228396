"""The fidelity comparison's windows end where both sides still ran (issue 30 item 3)."""

from __future__ import annotations

from allotment.reconcile.replay.compare import compare
from allotment.reconcile.replay.events import Event


def _run(job: str, start: float, end: float) -> list[Event]:
    return [
        Event(0.0, "submit", job, "teama", 8, 1, True, kind="batch"),
        Event(start, "start", job, "teama", 8, 1, True, kind="batch"),
        Event(end, "end", job, "teama", 8, 1, True, kind="batch"),
    ]


def test_the_seconds_one_side_outlasts_the_other_are_no_window_of_their_own() -> None:
    # the same run, ended 4 s later on the cluster: past a window boundary on one side only
    real, sim = _run("a", 2.0, 603.0), _run("a", 2.0, 599.0)
    rows = compare(real, sim, capacity=8, node_gpus={})
    windows = [r.metric for r in rows if r.metric.startswith("occupancy ")]
    assert windows == ["occupancy 0-300s", "occupancy 300-599s", "occupancy whole run"]
    assert all(r.ok is not False for r in rows)
    # the last window is scored over what both ran: both sides busy all of it
    last = next(r for r in rows if r.metric == "occupancy 300-599s")
    assert last.real == last.sim == 1.0


def test_a_side_that_ends_much_later_still_misses_its_windows_and_waits() -> None:
    real, sim = _run("a", 100.0, 700.0), _run("a", 2.0, 599.0)
    missed = {r.metric for r in compare(real, sim, capacity=8, node_gpus={}) if r.ok is False}
    assert {"occupancy 0-300s", "wait p50 batch (s)"} <= missed
