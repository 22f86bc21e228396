"""Charged usage over a *sliding* lookback window, exactly.

Each account's charged reference-GPU-hours form a piecewise-linear cumulative curve ``C(t)``
(the slope is the reference GPUs charged at that moment).  Usage over the window ending at ``now``
is ``C(now) - C(now - lookback)``: usage really leaves the window as it slides, unlike Slurm's
default exponential decay.  Times must be fed in non-decreasing order; queries are O(log n).

Only the last lookback of a curve is ever read again by a run that moves forward, so a driver
may fold the rest away (``UsageLedger.forget_before``): the changes before the one in effect at
the cut are dropped, the cumulative values kept are the same floats, so every answer at or after
the cut is the same to the bit, and one before what is kept is refused (``ValueError``), never
guessed.  A 90-day run otherwise keeps every start and end since t = 0 (issue 27, item 4).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TypeVar, overload

_T = TypeVar("_T")


class _Curve:
    __slots__ = ("cum", "rate", "times")

    def __init__(self) -> None:
        self.times: list[float] = [0.0]
        self.cum: list[float] = [0.0]  # C at times[i], in reference GPU-seconds
        self.rate: list[float] = [0.0]  # slope after times[i]

    def change(self, t: float, delta_rate: float) -> None:
        last = len(self.times) - 1
        if t < self.times[last]:
            raise ValueError("usage changes must come in time order")
        c = self.cum[last] + self.rate[last] * (t - self.times[last])
        r = self.rate[last] + delta_rate
        if abs(r) < 1e-9:
            r = 0.0
        if t == self.times[last]:
            self.cum[last], self.rate[last] = c, r
        else:
            self.times.append(t)
            self.cum.append(c)
            self.rate.append(r)

    def rate_at(self, t: float) -> float:
        """The slope just after ``t`` (charged reference GPUs)."""
        if t < 0.0:
            return 0.0
        i = _bisect_right(self.times, t) - 1
        if i < 0:
            raise _forgotten(t)
        return self.rate[i]

    def next_time_after(self, t: float) -> float:
        """The first change time strictly after ``t`` (inf if none)."""
        i = _bisect_right(self.times, t)
        if i == 0 and self.times[0] > 0.0:
            raise _forgotten(t)  # a change between t and what is kept may have been dropped
        return self.times[i] if i < len(self.times) else math.inf

    def at(self, t: float) -> float:
        if t <= 0.0:
            return 0.0
        i = _bisect_right(self.times, t) - 1
        if i < 0:
            raise _forgotten(t)
        return self.cum[i] + self.rate[i] * (t - self.times[i])

    def forget_before(self, t: float) -> None:
        """Drop the changes before the one in effect at ``t`` (that one stays: it gives ``C`` and
        the slope from there on).  Only when they are at least half of what is held, so that the
        copy this costs is paid once per as many changes as it drops."""
        i = _bisect_right(self.times, t) - 1
        if i > 0 and 2 * i >= len(self.times):
            del self.times[:i]
            del self.cum[:i]
            del self.rate[:i]


def _bisect_right(times: list[float], t: float) -> int:
    """``bisect.bisect_right(times, t)``, the same steps as the library's: a plain loop, since
    under mypyc the library function is a generic call with ``t`` boxed and every step a rich
    comparison of two float objects (``_Curve.at`` was 2.1% of a 27-day Philly-shaped run's
    instructions, about 1,900 a call; here the floats are compared unboxed)."""
    lo, hi = 0, len(times)
    while lo < hi:
        mid = (lo + hi) // 2
        if t < times[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _forgotten(t: float) -> ValueError:
    return ValueError(f"usage at t={t} was folded away (UsageLedger.forget_before)")


class UsageLedger:
    """Charged usage per account; ``start``/``stop`` a charge of ``ref_gpus`` reference GPUs."""

    def __init__(self, lookback_s: float) -> None:
        self.lookback_s = float(lookback_s)
        self._curves: dict[str, _Curve] = {}

    def start(self, account: str, t: float, ref_gpus: float) -> None:
        self._curve(account).change(t, ref_gpus)

    def stop(self, account: str, t: float, ref_gpus: float) -> None:
        self._curve(account).change(t, -ref_gpus)

    def forget_before(self, t: float) -> None:
        """Fold away what no question at or after ``t`` reads (see the module docstring): the
        driver promises to ask nothing earlier; if it does, the curve refuses."""
        for c in self._curves.values():
            c.forget_before(t)

    def window_gpu_hours(self, account: str, now: float) -> float:
        """Charged reference GPU-hours of ``account`` in (now - lookback, now]."""
        c = self._curves.get(account)
        if c is None:
            return 0.0
        return (c.at(now) - c.at(now - self.lookback_s)) / 3600.0

    def total_gpu_hours(self, account: str, now: float) -> float:
        c = self._curves.get(account)
        return 0.0 if c is None else c.at(now) / 3600.0

    def snapshot(self, now: float) -> dict[str, float]:
        return {a: self.window_gpu_hours(a, now) for a in sorted(self._curves)}

    def _curve(self, account: str) -> _Curve:
        c = self._curves.get(account)
        if c is None:
            c = self._curves[account] = _Curve()
        return c


class WindowView(Mapping[str, float]):
    """The window usage of every account at ``now``, computed only for the accounts asked for
    (a pass that does not re-rank never pays for it), each once: the ledger only takes changes
    at or after ``now`` (in time order, the view's instant being past), and those leave
    ``C(now)`` and ``C(now - lookback)`` as they were."""

    def __init__(self, ledger: UsageLedger, now: float) -> None:
        self._ledger = ledger
        self._now = now
        self._hours: dict[str, float] = {}

    def __getitem__(self, account: str) -> float:
        if account not in self._ledger._curves:
            raise KeyError(account)
        return self._window(account)

    def _window(self, account: str) -> float:
        got = self._hours.get(account)
        if got is None:
            got = self._hours[account] = self._ledger.window_gpu_hours(account, self._now)
        return got

    @overload
    def get(self, account: str, /) -> float | None: ...
    @overload
    def get(self, account: str, default: float | _T, /) -> float | _T: ...
    def get(self, account: str, default: object = None, /) -> object:
        """``Mapping.get``, the mixin's answer without its ``try: self[account]`` in
        interpreted Python (the Fair Tree and the reclaim measure ask it for every leaf)."""
        if account not in self._ledger._curves:
            return default
        return self._window(account)

    def trend(self, account: str) -> tuple[float, float]:
        """(window GPU-hours at the view's instant, their rate of change in GPU-hours per second
        from it): what enters the window now minus what leaves its far end, each at its current
        slope.  Exact until ``next_break`` or the next charge change."""
        c = self._ledger._curves.get(account)
        if c is None:
            return 0.0, 0.0
        far = self._now - self._ledger.lookback_s
        return self._window(account), (c.rate_at(self._now) - c.rate_at(far)) / 3600.0

    def next_break(self) -> float:
        """The first instant after the view's at which some account's window usage changes slope
        although no charge changes: the window's far end reaching a past charge change."""
        far = self._now - self._ledger.lookback_s
        nxt = math.inf
        for c in self._ledger._curves.values():
            t = c.next_time_after(far)
            if t < nxt:
                nxt = t
        return nxt + self._ledger.lookback_s

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._ledger._curves))

    def __len__(self) -> int:
        return len(self._ledger._curves)


def seconds_in_window(lo: float, hi: float, now: float, lookback_s: float) -> float:
    """How much of the interval ``[lo, hi)`` lies inside the sliding window ending at ``now``.

    The one window rule, shared by ``UsageLedger`` (the simulator and ``decide``) and the
    reconciler's SQLite ledger: the window is ``[now - lookback_s, now)``, usage before it has
    left, usage after ``now`` has not happened yet."""
    return max(0.0, min(hi, now) - max(lo, now - lookback_s))
