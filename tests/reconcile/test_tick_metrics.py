"""Each tick's wall time and result, kept in status.json for ``/metrics`` (the histogram of
tick durations and the ticks by result), and the last observation kept for the live views."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.observation_file import OBSERVATION_FILE, load_observation
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from allotment.reconcile.status import read_status, render_text
from allotment.reconcile.tick_metrics import INF, TICK_BUCKETS_S, le
from tests.reconcile.conftest import T0, Clock
from tests.reconcile.test_reconciler import FlakyBackend


class Timer:
    """A monotonic timer a test moves: each tick reads it twice (start, end)."""

    def __init__(self, steps: list[float]) -> None:
        self.t, self.steps = 1000.0, list(steps)
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        if self.calls % 2 == 0:  # the end of a tick: it took the next step
            self.t += self.steps.pop(0)
        return self.t


def _reconciler(tmp_path: Path, config_repo: Path, backend: object, timer: Timer) -> Reconciler:
    src = GitSource(str(config_repo), "main", tmp_path / "state")
    return Reconciler(backend, src, tmp_path / "state", Options(tiers_s=(20,)),  # type: ignore[arg-type]
                      clock=Clock(T0), timer=timer)


def test_each_tick_records_its_duration_and_result_as_a_cumulative_histogram(
    tmp_path: Path, config_repo: Path, sim: SimulatedBackend
) -> None:
    flaky = FlakyBackend(sim)
    rec = _reconciler(tmp_path, config_repo, flaky, Timer([0.2, 3.0, 0.04]))
    try:
        rec.tick()
        flaky.down = True
        assert rec.tick().error  # a dead controller: Stalled, an error tick
        flaky.down = False
        rec.tick()
    finally:
        rec.close()
    st = read_status(tmp_path / "state")  # from the file, as /metrics reads it
    assert st.last_tick_duration_s == 0.04 and st.last_tick_result == "success"
    assert st.tick_results == {"success": 2, "error": 1}
    assert st.tick_duration_sum_s == 3.24
    b = st.tick_duration_buckets
    assert set(b) == {le(x) for x in TICK_BUCKETS_S} | {INF}
    assert (b["0.01"], b["0.05"], b["0.25"], b["2.5"], b["5.0"], b[INF]) == (0, 1, 2, 2, 3, 3)
    counts = [b[le(x)] for x in TICK_BUCKETS_S] + [b[INF]]
    assert counts == sorted(counts)  # cumulative: never decreasing


def test_an_error_tick_is_recorded_as_such(tmp_path: Path, config_repo: Path, sim: SimulatedBackend) -> None:
    flaky = FlakyBackend(sim)
    flaky.down = True
    rec = _reconciler(tmp_path, config_repo, flaky, Timer([1.5]))
    try:
        rec.tick()
    finally:
        rec.close()
    st = read_status(tmp_path / "state")
    assert (st.last_tick_result, st.last_tick_duration_s, st.tick_results) == ("error", 1.5, {"error": 1})
    assert "took 1.5 s, error" in render_text(st, T0 + 5)


def test_the_last_observation_is_kept_for_the_views_on_the_backends_clock(
    tmp_path: Path, config_repo: Path, sim: SimulatedBackend
) -> None:
    rec = _reconciler(tmp_path, config_repo, sim, Timer([0.1, 0.1]))
    try:
        rec.tick()
        sim.submit("teama1", 8)
        sim.submit("teamb", 16)
        expected = sim.observe()
        rec.tick()
    finally:
        rec.close()
    got = load_observation(tmp_path / "state")
    assert got is not None and {j.account for j in got.jobs} == {"teama1", "teamb"}
    assert got == replace(expected, at=expected.backend_now or expected.at)
    raw = json.loads((tmp_path / "state" / OBSERVATION_FILE).read_text())  # one whole JSON document
    assert raw == json.loads(json.dumps(asdict(got)))  # the shape is asdict's
