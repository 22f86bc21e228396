"""Folding the ledger's past away (``UsageLedger.forget_before``) changes no answer at or after
the cut, refuses one before what it kept, and keeps a long run's ledger to its last lookbacks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.usage import UsageLedger, WindowView

LOOKBACK = 100.0
CHANGE = st.tuples(st.floats(0, 50), st.sampled_from("ab"), st.integers(1, 8))


def _ledgers(steps: list[tuple[float, str, int]]) -> tuple[UsageLedger, UsageLedger, list[float]]:
    """The same charges into two ledgers, the second folded at each step to its window's far
    end (as the simulator does at each epoch); the times of the steps."""
    whole, folded = UsageLedger(LOOKBACK), UsageLedger(LOOKBACK)
    running: dict[str, list[int]] = {"a": [], "b": []}
    t, times = 0.0, []
    for dt, account, gpus in steps:
        t += dt
        times.append(t)
        for led in (whole, folded):
            if running[account] and gpus % 2:
                led.stop(account, t, running[account][-1])
            else:
                led.start(account, t, gpus)
        if running[account] and gpus % 2:
            running[account].pop()
        else:
            running[account].append(gpus)
        _same(whole, folded, t)  # what a pass at this step reads
        folded.forget_before(t - LOOKBACK)
    return whole, folded, times


def _same(whole: UsageLedger, folded: UsageLedger, at: float) -> None:
    a, b = WindowView(whole, at), WindowView(folded, at)
    for account in "ab":
        assert whole.window_gpu_hours(account, at) == folded.window_gpu_hours(account, at)
        assert a.trend(account) == b.trend(account)
        assert whole.total_gpu_hours(account, at) == folded.total_gpu_hours(account, at)
    assert a.next_break() == b.next_break()
    assert whole.snapshot(at) == folded.snapshot(at)


@settings(max_examples=200, deadline=None)
@given(st.lists(CHANGE, min_size=1, max_size=60), st.floats(0, 400))
def test_a_folded_ledger_answers_every_later_window_to_the_bit(steps: list[tuple[float, str, int]], ahead: float) -> None:
    """At each step (before its fold) and at any time after the last: the same floats."""
    whole, folded, times = _ledgers(steps)
    _same(whole, folded, times[-1])
    _same(whole, folded, times[-1] + ahead)


def test_a_question_before_what_was_kept_is_refused() -> None:
    led = UsageLedger(LOOKBACK)
    for i in range(100):
        led.start("a", 10.0 * i, 1)
    led.forget_before(900.0)
    assert led.window_gpu_hours("a", 1000.0) == _unfolded_window(1000.0)
    with pytest.raises(ValueError, match="folded away"):
        led.window_gpu_hours("a", 950.0)  # reads C(850): dropped
    with pytest.raises(ValueError, match="folded away"):
        WindowView(led, 950.0).next_break()


def _unfolded_window(now: float) -> float:
    """The window of the ledger in the test above, never folded."""
    led = UsageLedger(LOOKBACK)
    for i in range(100):
        led.start("a", 10.0 * i, 1)
    return led.window_gpu_hours("a", now)


def test_a_ledger_folded_as_it_goes_keeps_about_two_windows() -> None:
    led = UsageLedger(LOOKBACK)
    for i in range(20_000):
        t = float(i)
        (led.start if i % 2 == 0 else led.stop)("a", t, 1)
        led.forget_before(t - LOOKBACK)
    assert len(led._curves["a"].times) <= 2 * LOOKBACK + 2
