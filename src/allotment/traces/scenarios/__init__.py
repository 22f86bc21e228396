"""Built-in workload scenarios, looked up by name (``allot trace generate --scenario NAME``).

Every scenario is a function ``generate(config, *, cluster, days, seed) -> Workload`` that is
deterministic for a given seed and never reads files, clocks or global randomness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from allotment.errors import UsageError
from allotment.traces.scenarios.workload import Workload

SCENARIOS: tuple[str, ...] = ("ai2",)


def get_scenario(name: str) -> Callable[..., Workload]:
    """Return the generator of scenario ``name``; unknown names are a usage error."""
    if name == "ai2":
        from allotment.traces.scenarios.ai2 import generate

        gen: Callable[..., Any] = generate
        return gen
    raise UsageError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")


__all__ = ["SCENARIOS", "Workload", "get_scenario"]
