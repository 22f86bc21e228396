"""Bulk allocation leaves the garbage collector as it found it, and garbage still collectable."""

from __future__ import annotations

import gc
import weakref

from allotment.config.bulk import bulk_allocation


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_collector_state_is_restored() -> None:
    assert gc.isenabled()
    with bulk_allocation():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_allocation():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cycles_made_during_bulk_work_are_still_collected() -> None:
    with bulk_allocation():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
    gc.collect()  # a cycle: only the collector frees it; a frozen object it would skip
    assert ref() is None
