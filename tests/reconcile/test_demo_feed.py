"""A demo cluster that lives: ``--workload`` feeds the sim backend jobs in real time (submitted at
their compressed time, after the jobs they depend on, finished when their work is done, a
resumable one keeping what it ran across a requeue), and a restarted reconciler goes on."""

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
from allotment.cli.main import main
from allotment.core.jobs import JobSpec
from allotment.reconcile.demo_feed import FEED_FILE, make_feed, restore, save
from allotment.reconcile.state_errors import StateFileError
from tests.reconcile.conftest import T0, Clock


def _feed(jobs: list[JobSpec]) -> Any:
    return make_feed(jobs, label="test x1", origin=T0, speedup=1.0, default_min_s=20, tiers_s=(20,))


def test_jobs_arrive_on_time_after_their_dependencies_and_end_when_their_work_is_done(
    make_reconciler: Any, sim: SimulatedBackend, clock: Clock
) -> None:
    make_reconciler().tick()  # accounts, users and QOS exist, as after a first reconcile
    feed = _feed([
        JobSpec("a", 0.0, "teama1", 8, work=100.0, user="root"),
        JobSpec("b", 10.0, "teama1", 8, work=50.0, user="root", depends_on=("a",)),
        JobSpec("big", 20.0, "teamb", 64, work=10.0, user="root"),
        JobSpec("later", 500.0, "teamb", 4, work=10.0, user="nobody"),
    ])
    assert feed.step(sim, T0) == 1 and set(feed.ids) == {"a"}
    sim.advance(30.0)
    assert feed.step(sim, T0 + 30) == 0 and feed.waiting == [1]  # b waits for a; big left out
    assert feed.left_out == {"larger than one node (the sim backend places a job on one node)": 1}
    sim.advance(70.0)
    assert feed.step(sim, T0 + 100) == 2  # a ends, then b goes in
    assert "a" in feed.done and set(feed.ids) == {"a", "b"}
    assert sim.observe().job(feed.ids["a"]) is None
    assert [r.id for r in sim.history(0.0)] == [feed.ids["a"]]
    sim.advance(400.0)
    feed.step(sim, T0 + 500)
    later = sim.observe().job(feed.ids["later"])  # its user has no association: a member runs it
    assert later is not None and later.user == "root"


def test_a_requeued_resumable_job_keeps_what_it_ran_and_an_other_starts_over(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    make_reconciler().tick()
    feed = _feed([
        JobSpec("keeps", 0.0, "teama1", 8, work=100.0, user="root"),
        JobSpec("loses", 0.0, "teamb", 8, work=100.0, user="root", resumable=False),
    ])
    feed.step(sim, T0)
    sim.advance(60.0)
    for j in ("keeps", "loses"):
        started = sim.observe().job(feed.ids[j])
        assert started is not None and started.start is not None
        sim.apply([ClusterAction("requeue", feed.ids[j], "test", "test")])
    sim.advance(11.0)  # the requeue delay: both start again at T0 + 71
    sim.advance(40.0)
    feed.step(sim, T0 + 111)
    assert feed.done == {"keeps"}  # 60 + 40 s of its 100 s; the other has run 40 s of a new run
    sim.advance(60.0)
    feed.step(sim, T0 + 171)
    assert feed.done == {"keeps", "loses"}


def test_a_restarted_feed_goes_on_where_it_stopped(make_reconciler: Any, sim: SimulatedBackend, tmp_path: Path) -> None:
    make_reconciler().tick()
    jobs = [JobSpec("a", 0.0, "teama1", 8, work=100.0, user="root"), JobSpec("b", 50.0, "teamb", 8, work=10.0, user="root")]
    first = _feed(jobs)
    first.step(sim, T0)
    save(first, tmp_path)
    again = restore(_feed(jobs), tmp_path)
    assert (again.next, again.ids, again.origin) == (first.next, first.ids, T0)
    sim.advance(50.0)
    assert again.step(sim, T0 + 50) == 1 and set(again.ids) == {"a", "b"}  # a is not sent twice


def test_allot_reconcile_with_a_workload_shows_a_living_cluster(config_repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "st"
    argv = [sys.executable, "-m", "allotment.cli.main", "reconcile", "--backend", "sim", "--source",
            str(config_repo), "--state", str(state), "--interval", "1s", "--workload", "ai2",
            "--speedup", "3600", "--workload-days", "1"]
    with (tmp_path / "log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ})
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "log").read_text()
            feed = state / "feed.json"
            if feed.exists() and len(json.loads(feed.read_text())["done"]) > 5:
                break
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    status = json.loads((state / "status.json").read_text())
    assert any(c["type"] == "Ready" for c in status["conditions"])
    assert main(["status", "--state", str(state), "--format", "json"]) == 0
    backend = SimulatedBackend.load(state / "sim.json")
    obs = backend.observe()
    assert obs.running() and len(backend.history(0.0)) > 5  # jobs run, and jobs have ended
    assert main(["explain", obs.running()[0].id, "--state", str(state)]) == 0


def test_a_workload_is_for_the_sim_backend_and_a_known_scenario(
    config_repo: Path, tmp_path: Path, capsys: Any
) -> None:
    base = ["reconcile", "--source", str(config_repo), "--state", str(tmp_path / "st"), "--once"]
    assert main([*base, "--backend", "sim", "--workload", "nosuch"]) == 2
    assert "--workload nosuch: unknown; known: ai2" in capsys.readouterr().err
    assert main([*base, "--backend", "slurm", "--workload", "ai2"]) == 2
    assert "only the sim backend takes a workload" in capsys.readouterr().err
    assert not (tmp_path / "st").exists()  # refused before anything was started


def test_the_workload_is_fed_even_while_active_mode_fails(config_repo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "health.txt"
    bad.write_text("n1 sick\n")  # not 'healthy|unhealthy': every tick is Stalled, BackendFailure
    state = tmp_path / "st"
    argv = ["reconcile", "--backend", "sim", "--source", str(config_repo), "--state", str(state), "--once",
            "--workload", "ai2", "--speedup", "3600", "--health-file", str(bad)]
    assert main(argv) == 3
    feed = json.loads((state / "feed.json").read_text())  # the feed started on the first tick
    assert feed["label"] == "ai2 7 days x3600 on gpulab" and feed["next"] == 0


def test_a_feed_file_with_a_non_finite_origin_or_nested_deep_is_a_bad_state_file(tmp_path: Path) -> None:
    """``feed.json`` is a state file like the others (issue 32, item 7): strict JSON, so an
    origin of ``NaN`` is not taken as a clock and deep nesting is not a RecursionError."""
    jobs = [JobSpec("a", 0.0, "teama1", 8, work=100.0, user="root")]
    save(_feed(jobs), tmp_path)
    good = json.loads((tmp_path / FEED_FILE).read_text())
    for text in (json.dumps(good | {"origin": float("nan")}), "[" * 100_000 + "]" * 100_000):
        (tmp_path / FEED_FILE).write_text(text)
        with pytest.raises(StateFileError):
            restore(_feed(jobs), tmp_path)
