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


def refuse_second_write(record: object, name: str) -> None:
    """Raise ``FrozenInstanceError``, as a frozen dataclass does, if ``name`` of ``record``
    already has a value.  The record's own ``__setattr__`` then stores the first write: from
    here, outside the compiled class, ``object.__setattr__`` is refused on it (``TypeError``)."""
    if hasattr(record, name):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")


def refuse_delete(name: str) -> NoReturn:
    """Deleting a field of a written-once record raises, as a frozen dataclass does."""
    raise FrozenInstanceError(f"cannot delete field {name!r}")
