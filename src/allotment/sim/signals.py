"""Piecewise-constant quantities integrated hour by hour (GPUs running, GPUs demanded, ...).

The Ai2 definitions are hourly ("owed is the allocation capped hour by hour at demand"), so every
signal keeps one integral per hour of the run, in GPU-seconds; the array grows as time advances
(a double an hour, not a float object and a list slot: about 50 signals a run, issue 32 item 5)."""

from __future__ import annotations

from array import array
from typing import Final

HOUR: Final = 3600.0  # Final: a compiled constant, not a module-dict lookup per use


class HourlySignal:
    __slots__ = ("hours", "last", "value")

    def __init__(self, value: float = 0.0) -> None:
        self.hours: array[float] = array("d")
        self.value = value
        self.last = 0.0

    def advance(self, t: float) -> None:
        """Integrate the current value from the last change up to ``t``."""
        a = self.last
        if t <= a:
            return
        hours = self.hours
        need = int(t // HOUR) + 1
        if len(hours) < need:
            hours.extend(array("d", bytes(8 * (need - len(hours)))))  # zeros
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

    def hour(self, h: int) -> float:
        return self.hours[h] if h < len(self.hours) else 0.0
