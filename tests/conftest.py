"""Shared test options.  ``--regen-golden`` rewrites golden files instead of comparing them.

Hypothesis explores new examples on every local run; under CI (``CI=true``) it is derandomized,
so a CI run is reproducible and a red CI can be re-run to the same examples.  Neither profile
has a per-example deadline (speed is measured in ``benchmarks/``, never by a test)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# no per-example deadline: a test is judged by what it asserts, never by time (a loaded 2-core
# machine ran a plain name check past Hypothesis' default 200 ms and failed it)
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("local", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "local")

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite golden files from the current output (review the diff!)",
    )


@pytest.fixture
def regen_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-golden"))


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


def assert_golden(path: Path, actual: str, regen: bool) -> None:
    """Compare ``actual`` with the golden file at ``path`` (or rewrite it with --regen-golden)."""
    if regen or not path.exists():
        if not regen:
            pytest.fail(f"golden file {path} missing; run make regen and review it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} differs; run make regen and review the diff"
