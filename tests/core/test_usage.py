from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.core.usage import UsageLedger


def test_usage_leaves_the_window_as_it_slides() -> None:
    led = UsageLedger(lookback_s=10 * 3600)
    led.start("a", 0.0, 8)
    led.stop("a", 3600.0, 8)  # 8 GPU-hours in the first hour
    assert led.window_gpu_hours("a", 3600.0) == pytest.approx(8.0)
    assert led.window_gpu_hours("a", 10 * 3600.0) == pytest.approx(8.0)
    assert led.window_gpu_hours("a", 10.5 * 3600.0) == pytest.approx(4.0)  # half slid out
    assert led.window_gpu_hours("a", 11 * 3600.0) == pytest.approx(0.0)
    assert led.total_gpu_hours("a", 11 * 3600.0) == pytest.approx(8.0)


def test_running_charge_accrues_until_stopped() -> None:
    led = UsageLedger(lookback_s=7 * 86400)
    led.start("a", 100.0, 2)
    assert led.window_gpu_hours("a", 100.0 + 1800) == pytest.approx(1.0)


def test_changes_out_of_order_are_refused() -> None:
    led = UsageLedger(60)
    led.start("a", 10.0, 1)
    with pytest.raises(ValueError):
        led.stop("a", 5.0, 1)


@given(
    st.lists(st.tuples(st.floats(0, 1000), st.floats(0, 1000), st.integers(1, 8)), min_size=1, max_size=20),
    st.floats(1, 3000),
    st.floats(0, 3000),
)
def test_window_equals_the_overlap_of_every_charge(intervals: list[tuple[float, float, int]], lookback: float, now: float) -> None:
    events = []
    for a, b, g in intervals:
        s, e = min(a, b), max(a, b)
        events.append((s, 1, g))
        events.append((e, -1, g))
    led = UsageLedger(lookback)
    for t, sign, g in sorted(events, key=lambda x: (x[0], -x[1])):
        (led.start if sign > 0 else led.stop)("x", t, g)
    expected = 0.0
    lo = now - lookback
    for a, b, g in intervals:
        s, e = min(a, b), max(a, b)
        expected += g * max(0.0, min(e, now) - max(s, lo, 0.0))
    assert led.window_gpu_hours("x", now) == pytest.approx(expected / 3600.0, abs=1e-6)
