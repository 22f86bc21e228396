"""The two readings of a duration (``allotment.durations``): the config's whole seconds and the
command line's wall-clock seconds as written.  ``allot reconcile --interval 0.3s`` once meant
"back to back" (rounded to 0 s) and ``--lease-duration 1.5s`` meant 2 s."""

from __future__ import annotations

import pytest

from allotment.durations import parse_duration, parse_seconds


@pytest.mark.parametrize(("text", "seconds"), [("0.3s", 0.3), ("1.5s", 1.5), ("10s", 10.0),
                                                ("1h30m", 5400.0), ("2.5", 2.5), ("0s", 0.0)])
def test_a_wall_clock_flag_keeps_its_fraction(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


def test_the_config_reading_stays_whole_seconds() -> None:
    assert parse_duration("0.3s") == 0 and parse_duration("1.5s") == 2


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "1e300", "367d", "x", "", "5 s", "500ms"])
def test_a_wall_clock_flag_out_of_range_or_malformed_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_seconds(text)
