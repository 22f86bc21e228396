"""The minimum-runtime contract and the epoch rule."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.contract import is_allocated, min_runtime, protected_until
from allotment.core.epoch import epoch_of, next_epoch

POL = Policy(min_runtime_cap_s=3600, default_min_runtime_s=600)


def test_an_undeclared_minimum_runtime_takes_the_policy_default() -> None:
    assert min_runtime(None, POL) == 600.0


def test_a_declared_minimum_runtime_is_capped_and_never_negative() -> None:
    assert min_runtime(7200.0, POL) == 3600.0
    assert min_runtime(-5.0, POL) == 0.0
    assert min_runtime(120.0, POL) == 120.0


def test_minimum_runtime_zero_is_unallocated_and_preemptible_at_once() -> None:
    assert not is_allocated(min_runtime(0.0, POL))
    assert protected_until(100.0, 0.0, 5000.0) == 100.0


def test_protection_ends_after_the_minimum_runtime_or_when_the_job_would_end() -> None:
    assert protected_until(100.0, 600.0, 5000.0) == 700.0
    assert protected_until(100.0, 600.0, 60.0) == 160.0


def test_time_varying_inputs_are_read_at_the_last_epoch_boundary() -> None:
    assert epoch_of(899.0, 300) == 600.0 and epoch_of(900.0, 300) == 900.0
    assert next_epoch(899.0, 300) == 900.0 and next_epoch(900.0, 300) == 1200.0
    assert epoch_of(899.0, 0) == 899.0 and next_epoch(899.0, 0) == float("inf")
