"""``HourlySignal`` keeps its open hour in a native double (issue 27 item 1): the hours it reports
must be the plain integrator's, bit for bit, whenever a reader reads them, also in
the middle of a run that then goes on (``sim.window`` measures a paused run, ``sim.switch``
continues it)."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.sim.signals import HOUR, HourlySignal


class PlainSignal:
    """The integrator as it was before stop 46: ``hours[h] +=`` at every change."""

    def __init__(self, value: float = 0.0) -> None:
        self.hours: array[float] = array("d")
        self.value = value
        self.last = 0.0

    def advance(self, t: float) -> None:
        a = self.last
        if t <= a:
            return
        hours = self.hours
        need = int(t // HOUR) + 1
        if len(hours) < need:
            hours.extend(array("d", bytes(8 * (need - len(hours)))))
        v = self.value
        if v:
            h = int(a // HOUR)
            while a < t:
                b = min(t, (h + 1) * HOUR)
                hours[h] += v * (b - a)
                a = b
                h += 1
        self.last = t

    def add(self, t: float, delta: float) -> None:
        self.advance(t)
        self.value += delta


# a step: wait this long (often nothing, often to an hour's edge), then add or read
_steps = st.lists(
    st.tuples(
        st.one_of(st.just(0.0), st.sampled_from([HOUR, 0.5 * HOUR, 3 * HOUR]),
                  st.floats(0.0, 5 * HOUR, allow_nan=False), st.floats(0.0, 1.0)),
        st.one_of(st.none(), st.integers(-64, 64).map(float), st.floats(-100.0, 100.0, allow_nan=False)),
        st.booleans(),  # to the next whole hour instead
    ),
    max_size=60,
)


def _same(fast: HourlySignal, plain: PlainSignal) -> None:
    assert fast.hours.tobytes() == plain.hours.tobytes()
    assert (fast.value, fast.last) == (plain.value, plain.last)
    for h in range(len(plain.hours) + 2):
        assert repr(fast.hour(h)) == repr(plain.hours[h] if h < len(plain.hours) else 0.0)


@settings(max_examples=300, deadline=None)
@given(start=st.sampled_from([0.0, 8.0, -3.5]), steps=_steps)
def test_the_hours_read_after_advance_are_the_plain_integrators_bit_for_bit(
    start: float, steps: list[tuple[float, float | None, bool]]
) -> None:
    fast, plain = HourlySignal(start), PlainSignal(start)
    t = 0.0
    for wait, delta, to_hour in steps:
        t = (t // HOUR + 1) * HOUR if to_hour else t + wait
        if delta is None:  # a reader: advance, then read every hour
            fast.advance(t)
            plain.advance(t)
            _same(fast, plain)
        else:
            fast.add(t, delta)
            plain.add(t, delta)
            _same(fast, plain)  # read with no advance first (tests/sim/test_invariants.py does)
    end = t + 1.0
    fast.advance(end)
    plain.advance(end)
    _same(fast, plain)


def test_an_hour_left_while_the_value_is_zero_is_written_when_the_signal_runs_again() -> None:
    s, p = HourlySignal(), PlainSignal()
    for sig in (s, p):
        sig.add(10.0, 2.0)  # runs from 10 s
        sig.add(20.0, -2.0)  # stops at 20 s: 20 GPU-seconds in hour 0, still open
        sig.add(5 * HOUR + 1.0, 1.0)  # runs again hours later
        sig.advance(6 * HOUR)
    assert s.hours.tobytes() == p.hours.tobytes()
    assert s.hour(0) == 20.0
