"""The replay's pass time is when each tick read the jobs, measured from the grid."""

from __future__ import annotations

from allotment.reconcile.replay.observe_lag import observe_lag


def test_the_lag_is_the_median_offset_of_the_reads_from_the_grid() -> None:
    t0 = 1000.0
    reads = [999.0, t0 + 0.9, t0 + 2.95, t0 + 4.92, t0 + 7.4, t0 + 9.0]  # one before t0, one slow
    assert observe_lag(reads, t0, 2.0) == 0.95
    assert observe_lag([], t0, 2.0) == 0.0
