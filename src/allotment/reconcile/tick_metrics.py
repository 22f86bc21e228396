"""How long each tick took and how it ended, kept in ``status.json`` so that ``/metrics`` (a
fresh registry per scrape, reading the state dir) can serve them as Flux and controller-runtime
do: a histogram of tick durations (``gotk_reconcile_duration_seconds``) and a counter of ticks
by result (``controller_runtime_reconcile_total{result="success|error"}``).

A tick's result is ``error`` when it ended Stalled (the backend, the state dir, the clocks, an
action or the source failed, or the newest commit was rejected), else ``success``.  The
buckets are cumulative (each counts the ticks at or under its bound), the Prometheus shape, so
a reader needs no arithmetic; a bound is written as Prometheus writes ``le``.
"""

from __future__ import annotations

from allotment.reconcile.status import Status

# seconds: a tick on the simulated backend takes milliseconds, one on a large Slurm seconds,
# one that waits out a hung command up to its timeouts (20 s per command by default)
TICK_BUCKETS_S = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
INF = "+Inf"


def le(bound: float) -> str:
    return f"{bound:g}" if bound != int(bound) else f"{bound:.1f}"


def tick_result(status: Status) -> str:
    stalled = status.condition("Stalled")
    return "error" if stalled is not None and stalled.status else "success"


def record_tick(status: Status, duration_s: float) -> None:
    """Add one finished tick (its conditions already set) to the status' tick metrics."""
    result = tick_result(status)
    status.last_tick_duration_s = round(duration_s, 6)
    status.last_tick_result = result
    status.tick_results[result] = status.tick_results.get(result, 0) + 1
    status.tick_duration_sum_s = round(status.tick_duration_sum_s + duration_s, 6)
    buckets = status.tick_duration_buckets
    for bound in TICK_BUCKETS_S:
        if duration_s <= bound:
            buckets[le(bound)] = buckets.get(le(bound), 0) + 1
        else:
            buckets.setdefault(le(bound), 0)
    buckets[INF] = buckets.get(INF, 0) + 1
