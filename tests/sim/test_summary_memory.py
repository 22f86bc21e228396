"""Issue 32, item 5: what a run holds per job once the job is gone, measured as the growth of
``simulate``'s traced peak from N to 4N jobs of a steady stream (the same few jobs alive at any
time, whatever N).

A job that has gone may still cost, to the end of the run and through its summary:
  * its wait facts (``sim/settled.py``: 42 bytes) and completion time (8 bytes), kept because
    the percentiles are exact;
  * its first wait and pending time as doubles in the summary's lists, at most one per class it
    is in (all, its kind, large) and one per team list: 6 x 8 = 48 bytes;
  * the sorted copy of one list at a time (a float object and a list slot: 32 bytes a value).
That is 130 bytes a job.  Before, the summary's lists held float objects (24 bytes each) and a
list slot per class (8), and the completion times were copied to a list first: about 190.

Fed through a ``TakenJobs`` built before tracing starts, so the workload itself is not counted;
``lookback`` of an hour, so the usage ledger folds its past within the run as it does within a
long one (its bound is ``tests/sim/test_bounded_history.py``'s)."""

from __future__ import annotations

import gc
import math
import random
import tracemalloc

from allotment.core.jobs import JobSpec
from allotment.sim.runner import simulate
from allotment.traces.job_stream import TakenJobs
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

TEAMS = ("lm", "vision", "safety")
SIZES = (1, 1, 1, 2, 2, 4, 8)
PER_JOB_BOUND = 130  # bytes: the sum in the module docstring


def _stream(n: int, gpus: int) -> Workload:
    """``n`` independent jobs arriving at 70% of ``gpus``, 20-minute log-normal runs
    (``benchmarks/stream_trace.py``'s shape, smaller)."""
    rng = random.Random(1)
    mean_work = 1200.0 * math.exp(0.8**2 / 2)
    rate = 0.7 * gpus / (sum(SIZES) / len(SIZES) * mean_work)
    t, jobs = 0.0, []
    for i in range(n):
        t += rng.expovariate(rate)
        jobs.append(JobSpec(
            id=f"j{i:06d}", submit=round(t, 3), account=rng.choice(TEAMS), gpus=rng.choice(SIZES),
            work=round(min(86400.0, max(60.0, rng.lognormvariate(math.log(1200.0), 0.8))), 3),
            user=f"u{rng.randrange(8)}", min_runtime=rng.choice((0.0, 1800.0, 3600.0)),
        ))
    return Workload.of(tuple(jobs), ())


def _peak(n: int) -> int:
    config = make_config({t: 1 for t in TEAMS}, nodes=8)
    source = TakenJobs.of(_stream(n, 64))
    gc.collect()
    tracemalloc.start()
    try:
        r = simulate(config, source, overrides={"lookback": "1h"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.metrics["jobs"]["completed"] == n  # every job ran: the whole stream was replayed
    return peak


def test_a_gone_jobs_cost_through_the_summary_is_its_waits_as_doubles() -> None:
    n = 1000  # N and 4N within one chunk of the settled facts' slots (4,096): those add nothing here
    _peak(n)  # the first run imports and caches what every run shares
    small, large = _peak(n), _peak(4 * n)
    per_job = (large - small) / (3 * n)
    assert per_job < PER_JOB_BOUND, f"{per_job:.0f} bytes a job ({small} -> {large} bytes peak)"
