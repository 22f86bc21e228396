from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.core.usage import UsageLedger, WindowView


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


def test_a_window_view_answers_get_like_a_fresh_view_after_later_changes() -> None:
    """``WindowView.get`` (its own, not the ``Mapping`` mixin) gives ``view[a]`` or the default,
    and what it kept is what a fresh view gives after the ledger took changes at or after its
    instant (the only ones it takes while the view is used)."""
    led = UsageLedger(lookback_s=3600.0)
    led.start("a", 0.0, 3)
    led.start("b", 100.0, 1)
    view = WindowView(led, 1000.0)
    first = (view.get("a"), view.get("b"), view.get("c"), view.get("c", 0.0))
    assert first == (view["a"], view["b"], None, 0.0) == (3000.0 / 3600.0, 900.0 / 3600.0, None, 0.0)
    led.stop("a", 1000.0, 3)  # at the view's instant
    led.start("c", 1500.0, 2)  # a new account after it
    led.stop("b", 2000.0, 1)
    fresh = WindowView(led, 1000.0)
    assert (view.get("a"), view.get("b"), view.get("c", 0.0)) == (fresh.get("a"), fresh.get("b"), fresh.get("c", 0.0))
    assert first[:2] == (view["a"], view["b"])


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=40), st.floats(-2e6, 2e6, allow_nan=False),
       st.booleans())
def test_the_curves_search_is_the_librarys_bisect_right(times: list[float], t: float, at_one: bool) -> None:
    """``usage._bisect_right`` (a plain loop for mypyc) against ``bisect.bisect_right``, on
    sorted times with repeats, and at a time that is one of them."""
    import bisect

    from allotment.core.usage import _bisect_right

    times.sort()
    times += times[: len(times) // 3]  # repeats
    times.sort()
    if at_one and times:
        t = times[len(times) // 2]
    assert _bisect_right(times, t) == bisect.bisect_right(times, t)
