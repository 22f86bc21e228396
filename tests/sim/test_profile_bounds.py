"""Issue 32, item 10: ``--profile`` refuses a latency that is not a finite, bounded duration
(``cycle=inf`` and ``cycle=1e308`` were accepted: a scheduling cycle that never comes round)."""

from __future__ import annotations

import pytest

from allotment.errors import UsageError
from allotment.sim.latency import parse_profile


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-1", "31622401", "Infinity"])
def test_profile_refuses_a_latency_that_is_not_a_finite_bounded_duration(value: str) -> None:
    with pytest.raises(UsageError, match="0 <= SECONDS <= 31,622,400"):
        parse_profile(f"slurm,cycle={value}")


def test_profile_accepts_the_bounds_themselves() -> None:
    assert parse_profile("slurm,cycle=0").cycle_s == 0
    assert parse_profile("slurm,cycle=31622400").cycle_s == 31_622_400
