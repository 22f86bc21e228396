"""Records whose fields are written once: the rule behind ``JobSpec`` and ``sim.events.Event``.

Why: a frozen dataclass sets its fields through ``object.__setattr__`` in an ``__init__`` that
stays interpreted even when its module is compiled, the larger part of building one (a job: 2.3
of 3.4 us).  A record with its own ``__init__`` compiles into direct stores, and keeps a frozen
record's promise by refusing any write after the first (a compiled ``__init__`` stores without
calling ``__setattr__``; an interpreted one goes through it once per field).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import NoReturn


def write_once(record: object, name: str, value: object) -> None:
    """Set ``name`` on ``record`` if it has no value yet; a second write raises
    ``FrozenInstanceError``, as a frozen dataclass does."""
    if hasattr(record, name):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(record, name, value)


def refuse_delete(name: str) -> NoReturn:
    """Deleting a field of a written-once record raises, as a frozen dataclass does."""
    raise FrozenInstanceError(f"cannot delete field {name!r}")
