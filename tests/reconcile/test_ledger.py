from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.reconcile.ledger import BUCKET_S, Ledger, RunObs

T0 = 1_795_000_000.0 - (1_795_000_000.0 % BUCKET_S)


def test_the_same_observation_twice_adds_nothing(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    run = RunObs("7", "teama1", T0, T0 + 5400, 4)
    led.record([run])
    led.record([run])
    assert led.usage(T0 + 5400, 86400) == {"teama1": 6.0}
    assert led.rows() == 2  # two hour buckets
    led.close()


def test_usage_survives_a_restart_and_wal_is_on(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.record([RunObs("7", "teamb", T0, T0 + 3600, 8, weight=2.0)])
    led.close()
    again = Ledger(tmp_path / "l.sqlite")
    assert again.usage(T0 + 3600, 86400) == {"teamb": 16.0}
    assert again.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again.close()


def test_usage_slides_out_of_the_window(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.record([RunObs("1", "a", T0, T0 + 2 * 3600, 1)])
    window = 7 * 86400
    assert led.usage(T0 + 2 * 3600, window) == {"a": 2.0}
    assert (
        abs(led.usage(T0 + window + 1800, window)["a"] - 1.5) < 1e-9
    )  # half of the first hour is out
    assert led.usage(T0 + window + 2 * 3600, window).get("a", 0.0) == 0.0
    led.close()


def test_a_requeued_job_is_a_new_run(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.record([RunObs("5", "a", T0, T0 + 600, 8)])
    led.record([RunObs("5", "a", T0 + 900, T0 + 1500, 8)])
    assert abs(led.usage(T0 + 1500, 86400)["a"] - 8 * 1200 / 3600) < 1e-9
    led.close()


_obs = st.lists(
    st.tuples(
        st.sampled_from(["1", "2", "3"]),
        st.sampled_from(["a", "b"]),
        st.integers(0, 20_000),
        st.integers(0, 20_000),
        st.integers(1, 8),
    ),
    min_size=1,
    max_size=15,
)


@settings(max_examples=40, deadline=None)
@given(obs=_obs, order=st.randoms(use_true_random=False))
def test_order_and_repetition_of_observations_do_not_change_usage(
    obs: list[tuple[str, str, int, int, int]], order: object
) -> None:
    import random

    runs = [RunObs(j, a, T0 + s, T0 + s + d, g) for j, a, s, d, g in obs]
    # one account per (job, run start): a job does not change account between observations
    first: dict[tuple[str, float], str] = {}
    runs = [
        RunObs(r.job, first.setdefault((r.job, r.start), r.account), r.start, r.seen, r.gpus)
        for r in runs
    ]
    gpus: dict[tuple[str, float], int] = {}
    runs = [
        RunObs(r.job, r.account, r.start, r.seen, gpus.setdefault((r.job, r.start), r.gpus))
        for r in runs
    ]
    a = Ledger(Path(":memory:"))
    a.record(runs)
    shuffled = runs * 2
    assert isinstance(order, random.Random)
    order.shuffle(shuffled)
    b = Ledger(Path(":memory:"))
    for r in shuffled:
        b.record([r])
    now = T0 + 50_000
    ua, ub = a.usage(now, 86400), b.usage(now, 86400)
    assert ua.keys() == ub.keys() and all(abs(ua[k] - ub[k]) < 1e-9 for k in ua)
    # and the total is exactly the longest sighting of each run
    longest: dict[tuple[str, float], RunObs] = {}
    for r in runs:
        k = (r.job, r.start)
        if k not in longest or r.seen > longest[k].seen:
            longest[k] = r
    total = sum(r.gpus * (r.seen - r.start) / 3600 for r in longest.values())
    assert abs(sum(ua.values()) - total) < 1e-6
    a.close()
    b.close()


def test_the_file_is_plain_sqlite(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.record([RunObs("1", "a", T0, T0 + 60, 1)])
    led.close()
    db = sqlite3.connect(tmp_path / "l.sqlite")
    assert db.execute("SELECT job, account FROM usage").fetchall() == [("1", "a")]
    db.close()
