"""Issue 32, item 10: a plan-cache entry with the right key but garbage content is recomputed,
never used (it read as "not reported": no delivered hours, no flag)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.plan.simcache import SUBDIR, SimCache

KEY = "a" * 64
GOOD = {"days": 5.0, "teams": {"vision": {"received_gpu_hours": 120.0}}}


def _rewrite(cache: Path, change: Any) -> None:
    path = cache / SUBDIR / f"{KEY}.json"
    entry = json.loads(path.read_text())
    change(entry)
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e.update(metrics={"teams": "garbage"}),
        lambda e: e.update(metrics={"teams": {"vision": 3}}),
        lambda e: e["metrics"]["teams"]["vision"].update(received_gpu_hours=0.0),  # hash stale
        lambda e: e.update(metrics=[1, 2]),
        lambda e: e.pop("sha256"),
    ],
)
def test_a_cache_entry_with_the_right_key_and_bad_content_is_recomputed(
    tmp_path: Path, change: Any
) -> None:
    cache = SimCache(tmp_path)
    cache.put(KEY, GOOD)
    assert cache.get(KEY) == GOOD
    _rewrite(tmp_path, change)
    assert cache.get(KEY) is None


def test_a_cache_entry_with_a_non_finite_number_is_recomputed(tmp_path: Path) -> None:
    cache = SimCache(tmp_path)
    cache.put(KEY, GOOD)
    path = tmp_path / SUBDIR / f"{KEY}.json"
    path.write_text(path.read_text().replace("120.0", "Infinity"))
    assert cache.get(KEY) is None
