from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import make_repo

T0 = 1_795_000_000.0  # a fixed Unix time: the tests never read the wall clock


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def config_repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "budgets-repo")
    return tmp_path / "budgets-repo"


@pytest.fixture
def sim() -> SimulatedBackend:
    return SimulatedBackend([(f"n{i}", 8) for i in range(1, 5)], now=T0)


@pytest.fixture
def make_reconciler(
    tmp_path: Path, config_repo: Path, sim: SimulatedBackend, clock: Clock
) -> Iterator[object]:
    made: list[Reconciler] = []

    def make(options: Options | None = None, backend: object = None) -> Reconciler:
        options = options or Options(tiers_s=(20,))
        src = GitSource(str(config_repo), "main", tmp_path / "state")
        rec = Reconciler(backend or sim, src, tmp_path / "state", options, clock=clock)  # type: ignore[arg-type]
        made.append(rec)
        return rec

    yield make
    for r in made:
        r.close()
