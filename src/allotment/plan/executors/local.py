"""The reference executor: this machine's processes (``allot plan --workers N``: N cores).

One task, or one worker, runs in this process.  Otherwise every task gets its own forked process
at once, up to ``SHARE`` processes a core (:func:`processes`), and the operating system shares
the N cores between them.  Why more processes than cores: a plan's tasks are few and long (the
default plan: five units of about 20 s CPU on two cores), so a pool of N processes idles a core
at its end while the other finishes the odd unit, unless a seed is split and its workload and
warm-up simulated twice (about 7% more CPU; docs/benchmarks.md, "Stop 41").  Running them all
at once ends them all together, in the total CPU divided by N.  Results are yielded as they
end; the order in which tasks are given is the order in which they start (callers submit the
longest first).  A plan's unit of both sides forks one more process for its head side after the
shared warm-up (``impact_units.run_unit``, ``plan.forked``), which shares the same cores."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from allotment.plan.executors.protocol import ExecTask

# Processes a core at most: enough for the default plan's five units on two cores to run at
# once, few enough that a sweep of many runs does not hold them all in memory together.
SHARE = 3


def processes(tasks: int, workers: int) -> int:
    """How many tasks run at once on ``workers`` cores: every one, up to ``SHARE`` a core
    (``impact_units.makespan`` models the pool with it)."""
    return max(1, min(tasks, SHARE * workers))


@dataclass(frozen=True, slots=True)
class LocalPool:
    workers: int = 2  # cores to use

    @property
    def parallelism(self) -> int:
        return self.workers

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[ExecTask]) -> Iterator[tuple[int, Any]]:
        if len(tasks) < 2 or self.workers < 2:
            for i, t in enumerate(tasks):
                yield i, fn(t.arg)
            return
        # fork: the CLI is single-threaded here, and spawn would re-run the caller's
        # __main__ (a script without a main guard would recurse)
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        size = processes(len(tasks), self.workers)
        with ProcessPoolExecutor(max_workers=size, mp_context=ctx) as pool:
            futures = {pool.submit(fn, t.arg): i for i, t in enumerate(tasks)}
            for f in as_completed(futures):
                yield futures[f], f.result()
