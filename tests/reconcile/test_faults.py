"""Crashes and signals: nothing recorded is lost, the next start converges, SIGTERM exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.actions import ClusterAction
from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.loop import StopFlag, next_tick, run_loop
from tests.reconcile.conftest import T0


class CrashingBackend:
    """Crashes (a plain exception, like a bug or an OOM kill would end the process) inside
    ``apply`` of cluster actions, after the ledger of this tick was written."""

    name = "sim"

    def __init__(self, inner: SimulatedBackend) -> None:
        self.inner = inner

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def apply(self, actions: Any, *, dry_run: bool = False) -> Any:
        if any(isinstance(a, ClusterAction) for a in actions) and not dry_run:
            raise RuntimeError("process died mid-tick")
        return self.inner.apply(actions, dry_run=dry_run)


def test_a_crash_mid_tick_loses_no_ledger_rows_and_the_next_start_converges(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    first = make_reconciler()
    first.tick()
    job = sim.submit("teamb", 8, qos="alloc-20s")
    for _ in range(3):
        sim.submit("teamb", 8, qos="alloc-20s")
    sim.submit("teama1", 8, qos="alloc-20s")  # pending: the core acts for it -> the crash point
    first.clock.t = sim.state.now = T0 + 1800
    crashing = make_reconciler(backend=CrashingBackend(sim))
    with pytest.raises(RuntimeError):
        crashing.tick()
    rows = crashing.ledger.rows()
    assert rows == 4  # every running job's half hour, committed before the crash
    crashing.close()
    again = make_reconciler()
    result = again.tick()
    assert result.error is None
    assert again.ledger.rows() == rows
    assert again.ledger.usage(T0 + 1800, 86400) == {"teamb": 16.0}
    assert sim.observe().job(job) is not None
    assert all(r.code != "failed" for r in result.results)
    assert any(r.code == "applied" for r in result.results)  # what the crash cut off is done now


def test_run_loop_stops_between_ticks(make_reconciler: Any) -> None:
    rec = make_reconciler()
    stop = StopFlag()
    seen: list[object] = []

    def on_tick(r: object) -> None:
        seen.append(r)
        if len(seen) == 2:
            stop.set()

    run_loop(rec, interval_s=0.0, once=False, stop=stop, on_tick=on_tick)
    assert len(seen) == 2 and rec.status.ticks == 2


def test_sigterm_finishes_the_tick_and_exits_0(config_repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "st"
    argv = [
        sys.executable,
        "-m",
        "allotment.cli.main",
        "reconcile",
        "--backend",
        "sim",
        "--source",
        str(config_repo),
        "--state",
        str(state),
        "--interval",
        "1s",
    ]
    with (tmp_path / "log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while not (state / "status.json").exists():
            assert time.monotonic() < deadline, (tmp_path / "log").read_text()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        status = json.loads((state / "status.json").read_text())
        assert status["ticks"] >= 1 and status["last_applied_revision"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_ticks_keep_their_period_on_a_grid_and_an_overrun_skips_missed_slots() -> None:
    now = [100.0]
    starts: list[float] = []
    cost = iter([0.3, 0.3, 2.5, 0.3, 0.3])  # the third tick overruns two 1 s slots

    class Clocked(StopFlag):
        def wait(self, seconds: float) -> None:
            now[0] += max(0.0, seconds) + 0.01  # every wait wakes a little late

    class Ticking:
        def tick(self) -> object:
            starts.append(now[0])
            now[0] += next(cost)
            return None

        def wants_tick(self) -> bool:
            return False

    stop = Clocked()
    run_loop(Ticking(), interval_s=1.0, once=False, stop=stop,  # type: ignore[arg-type]
             on_tick=lambda r: stop.set() if len(starts) == 5 else None, clock=lambda: now[0])
    assert [round(t - 100.0, 2) for t in starts] == [0.0, 1.01, 2.01, 5.01, 6.01]
    assert next_tick(0.0, 0.2, 1.0) == 1.0 and next_tick(0.0, 3.5, 1.0) == 4.0
    assert next_tick(0.0, 7.0, 0.0) == 7.0
