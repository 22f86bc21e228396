from __future__ import annotations

from collections.abc import Callable

import pytest

from allotment.backends.protocol import Observation
from allotment.backends.simulated import SimulatedBackend


class SimHarness:
    """Contract harness for the reference backend: the clock moves one second per poll."""

    tiers_s = (20,)

    def __init__(self) -> None:
        self.backend = SimulatedBackend([(f"n{i}", 8) for i in range(1, 5)], now=1_000_000.0)

    def submit(self, account: str, gpus: int, qos: str) -> str:
        return self.backend.submit(account, gpus, qos=qos)

    def wait(
        self, what: str, pred: Callable[[Observation], bool], timeout: float = 30
    ) -> Observation:
        for _ in range(int(timeout)):
            obs = self.backend.observe()
            if pred(obs):
                return obs
            self.backend.advance(1.0)
        raise AssertionError(f"timed out waiting for {what}")

    def set_fairshare_by_hand(self, account: str, fairshare: int) -> None:
        self.backend.set_fairshare_by_hand(account, fairshare)


@pytest.fixture
def harness() -> SimHarness:
    return SimHarness()
