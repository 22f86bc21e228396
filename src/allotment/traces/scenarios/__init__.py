"""Built-in workload scenarios, looked up by name (``allot trace generate --scenario NAME``).

Every scenario is a function ``generate(config, *, cluster, days, seed) -> Workload`` that is
deterministic for a given seed and never reads files, clocks or global randomness.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from allotment.errors import UsageError
from allotment.traces.scenarios.calibration import BY_SCENARIO
from allotment.traces.scenarios.workload import Workload

SCENARIOS: tuple[str, ...] = tuple(BY_SCENARIO)


def get_scenario(name: str) -> Callable[..., Workload]:
    """Return the generator of scenario ``name``; unknown names are a usage error.

    ``ai2-big-gangs`` is the ``ai2`` generator under its previous calibration
    (``calibration.BIG_GANGS``: training runs up to 256 GPUs whatever the team's allocation), kept
    as a stress test of fragmentation and so earlier measurements can be re-run."""
    if name in BY_SCENARIO:
        from allotment.traces.scenarios.ai2 import generate

        gen: Callable[..., Any] = functools.partial(generate, calibration=BY_SCENARIO[name])
        return gen
    raise UsageError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")


__all__ = ["SCENARIOS", "Workload", "get_scenario"]
