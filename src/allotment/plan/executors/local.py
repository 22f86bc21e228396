"""The reference executor: this machine's processes (``allot plan --workers N``).

One task, or one worker, runs in this process; more run in a pool of forked processes, handed
out in the order given (callers submit the longest first), results yielded as they end."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from allotment.plan.executors.protocol import ExecTask


@dataclass(frozen=True, slots=True)
class LocalPool:
    workers: int = 2

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
        with ProcessPoolExecutor(max_workers=min(self.workers, len(tasks)), mp_context=ctx) as pool:
            futures = {pool.submit(fn, t.arg): i for i, t in enumerate(tasks)}
            for f in as_completed(futures):
                yield futures[f], f.result()
