"""`allot plan` (placeholder until its issue lands; registers nothing)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    return None
