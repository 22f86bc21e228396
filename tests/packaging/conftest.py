"""The packaging tests build the release's wheel (mypyc compiles the core: minutes on two cores)
and install it into fresh venvs, so they run only when asked for by marker: ``make test-wheel``
(``pytest -m wheel tests/packaging``), a step of ``.ci/run`` of its own.  ``make test`` selects
``-m "not slurm and not k8s"``, which does not name ``wheel``: there they are skipped, and say why."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "wheel" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="builds the release's wheel (minutes): make test-wheel")
    for item in items:
        if item.get_closest_marker("wheel"):
            item.add_marker(skip)
