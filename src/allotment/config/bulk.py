"""Pause the cyclic garbage collector around bulk loading and compiling.

A 10,000-node tree allocates a few hundred thousand objects and no reference cycles; the
collector would rescan them again and again as they pile up.  Measured on the benchmark tree:
about a quarter of the CPU time of ``load_config`` (benchmarks/compile_bench.py).  The previous
state is always restored, so callers see no change.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def bulk_allocation() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
