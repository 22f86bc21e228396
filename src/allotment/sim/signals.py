"""Piecewise-constant quantities integrated hour by hour (GPUs running, GPUs demanded, ...).

The Ai2 definitions are hourly ("owed is the allocation capped hour by hour at demand"), so every
signal keeps one integral per hour of the run, in GPU-seconds; the array grows as time advances
(a double an hour, not a float object and a list slot: about 50 signals a run, issue 32 item 5).

The hour being integrated (the *open* hour) is summed in a native double, ``_open``, and written
to the array once the signal leaves that hour, or when a reader reads ``hours``: compiled, an ``array`` element is read and written through generic
calls, and a signal changes a few dozen times an hour (a job starting or ending), so adding to
``hours[h]`` at every change was most of the metrics' cost on an imported trace (issue 27 item
1, docs/benchmarks.md "Stop 46").  The sum is the same double: the open hour's additions are made
in the same order onto the same 0.0, only in a local first (tests/sim/test_hourly_signal.py
checks it against the plain integrator, bit for bit)."""

from __future__ import annotations

from array import array
from typing import Final

HOUR: Final = 3600.0  # Final: a compiled constant, not a module-dict lookup per use


class HourlySignal:
    __slots__ = ("_h", "_hours", "_open", "last", "value")

    def __init__(self, value: float = 0.0) -> None:
        self._hours: array[float] = array("d")  # read through ``hours``
        self.value = value
        self.last = 0.0
        self._h = 0  # the open hour: what has been added to it since it was last written is in _open
        self._open = 0.0  # the open hour's integral so far (hours[_h] once written)

    @property
    def hours(self) -> array[float]:
        """Every hour's integral up to the last change or ``advance`` (zeros where nothing ran,
        one entry an hour up to that instant's): the open hour written first, for any reader."""
        self._write(self._h, self._open)
        need = int(self.last // HOUR) + 1 if self.last > 0.0 else 0
        if len(self._hours) < need:
            self._grow(need)
        return self._hours

    def advance(self, t: float) -> None:
        """Integrate the current value from the last change up to ``t``."""
        self._integrate(t)

    def add(self, t: float, delta: float) -> None:
        self._integrate(t)
        self.value += delta

    def hour(self, h: int) -> float:
        if h == self._h:
            return self._open  # the open hour (0.0 if nothing was ever added)
        hours = self._hours
        return hours[h] if h < len(hours) else 0.0

    def _integrate(self, t: float) -> None:
        """The plain integrator's additions (``hours[h] += v * (b - a)`` for each hour h that
        [last, t) meets, in order), the open hour's kept in ``_open``."""
        a = self.last
        if t <= a:
            return
        v = self.value
        if v:
            hi = (self._h + 1) * HOUR  # the open hour's end
            if t <= hi and a >= hi - HOUR:  # within the open hour: most changes
                self._open += v * (t - a)
                self.last = t
                return
            h = int(a // HOUR)
            acc = self._open
            if h != self._h:  # the open hour is over: written, and h starts from 0.0
                self._write(self._h, acc)
                acc = 0.0
            while True:
                b = (h + 1) * HOUR
                if t <= b:
                    acc += v * (t - a)
                    break
                acc += v * (b - a)
                self._write(h, acc)
                a = b
                h += 1
                acc = 0.0
            self._h = h
            self._open = acc
        self.last = t

    def _write(self, h: int, x: float) -> None:
        hours = self._hours
        n = len(hours)
        if h < n:
            hours[h] = x
            return
        if not x:
            return  # nothing added to an hour not grown yet: it reads 0.0 as it is
        if h > n:
            self._grow(h)
        hours.append(x)  # the next hour: one append, not an array of zeros built to extend

    def _grow(self, need: int) -> None:
        hours = self._hours
        hours.extend(array("d", bytes(8 * (need - len(hours)))))  # zeros
