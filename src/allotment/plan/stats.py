"""A mean and its 90% t-interval over paired differences: how sure a plan is of an effect.

Base and head are simulated on the same workloads (one per seed), so each seed gives one paired
difference ``after - before`` and the workload's own noise cancels out of it.  The interval is
the Student t interval on those differences; with five seeds its quantile is 2.132, wider than
the normal's 1.645, which is the point: five numbers cannot say much.

The quantile comes from the t distribution's own density (``math.lgamma``) integrated with
Simpson's rule and inverted by bisection, not from scipy, for one number per plan; the test
checks it against the printed table.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import cache

CONFIDENCE = 0.90


@dataclass(frozen=True, slots=True)
class Interval:
    """Mean paired difference over the seeds and its two-sided ``CONFIDENCE`` interval."""

    mean: float
    low: float
    high: float
    n: int  # seeds

    @property
    def excludes_zero(self) -> bool:
        """One seed has no spread to measure: it never excludes zero."""
        return self.n >= 2 and (self.low > 0 or self.high < 0)


def _density(x: float, df: int) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))


def _cdf_above_zero(x: float, df: int, steps: int = 200) -> float:
    """P(0 <= T <= x), by Simpson's rule (the density is smooth; 200 steps give 4 decimals at the quantiles used here)."""
    h = x / steps
    total = _density(0.0, df) + _density(x, df)
    for i in range(1, steps):
        total += (4 if i % 2 else 2) * _density(i * h, df)
    return total * h / 3


@cache
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (p > 0.5) of Student's t with ``df`` degrees of freedom."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and df >= 1, got p={p}, df={df}")
    target = p - 0.5
    lo, hi = 0.0, 1.0
    while _cdf_above_zero(hi, df) < target:
        hi *= 2
    for _ in range(40):
        mid = (lo + hi) / 2
        if _cdf_above_zero(mid, df) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def paired_interval(differences: list[float], confidence: float = CONFIDENCE) -> Interval:
    """Mean and t-interval of ``differences``; one seed gives a zero-width interval at the mean
    that never counts as excluding zero (nothing to estimate the spread from)."""
    n = len(differences)
    if n == 0:
        return Interval(0.0, 0.0, 0.0, 0)
    mean = statistics.fmean(differences)
    if n == 1:
        return Interval(mean, mean, mean, 1)
    half = t_quantile(0.5 + confidence / 2, n - 1) * statistics.stdev(differences) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom."""
    half = _cdf_above_zero(abs(x), df) if x else 0.0
    return 0.5 + half if x >= 0 else 0.5 - half


def p_below(differences: list[float], bound: float) -> float:
    """One-sided p-value of "the mean difference is at least ``bound``" (the t test on paired
    differences): small when the differences lie clearly below ``bound``.  Rejecting it at 5% is
    the very rule ``interval.high < bound`` of the 90% two-sided interval.  Fewer than two seeds,
    or seeds that all agree, carry no spread: 1 unless every difference is below ``bound``
    (then 0, which only a zero-spread run of two or more seeds reaches)."""
    n = len(differences)
    if n < 2:
        return 1.0
    mean = statistics.fmean(differences)
    sd = statistics.stdev(differences)
    if sd == 0.0:
        return 0.0 if mean < bound else 1.0
    return t_cdf((mean - bound) / (sd / math.sqrt(n)), n - 1)
