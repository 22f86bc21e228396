"""JSON for the state files a process reads back (the reconciler's status, observation and
simulated cluster): finite numbers only, nesting bounded, every failure a ``ValueError``.

``json.loads`` accepts ``NaN``, ``Infinity`` and ``1e999`` (an infinity), which compare false
with every time and usage and so slip past later checks, and raises ``RecursionError`` (not a
``ValueError``) on a file nested a few thousand deep: a traceback instead of the one line
``file: not a status file (...)`` every reader already gives for a bad file (issue 32, item 7).
"""

from __future__ import annotations

import json
import math
from typing import Any


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a finite number")


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text} is not a finite number")
    return x


def loads_finite(text: str | bytes) -> Any:
    """``json.loads`` refusing non-finite numbers and nesting deeper than Python's recursion
    limit, both as ``ValueError``."""
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float)
    except RecursionError:
        raise ValueError("nested too deeply") from None
