"""``allot status`` tree views and ``allot usage``: the tree adds up, and says what the ledger and
the event log hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.legible.livestate import read_state
from allotment.legible.replay import moment
from allotment.legible.rundir import read_run
from allotment.reconcile.ledger import Ledger
from allotment.reconcile.status import read_status, render_text


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_run_tree_adds_up_and_matches_the_event_log(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = 26 * 3600.0
    view = _json(capsys, "status", "--run", str(run_dir), "--at", "26h", "--format", "json")
    rows = {r["name"]: r for r in view["tree"]}
    root = next(r for r in view["tree"] if r["parent"] is None)
    m = moment(read_run(run_dir), t)
    assert root["running_allocated_gpus"] + root["running_unallocated_gpus"] == view["running_gpus"]
    assert view["running_gpus"] == sum(iv.gpus for iv in m.running.values())
    assert view["occupancy"] == round(view["running_gpus"] / 88, 4)
    for r in view["tree"]:
        kids = [k for k in view["tree"] if k["parent"] == r["name"]]
        if kids:
            assert r["usage_gpu_hours"] == pytest.approx(sum(k["usage_gpu_hours"] for k in kids))
            assert r["pending_gpus"] == sum(k["pending_gpus"] for k in kids)
            assert sorted(k["rank"] for k in kids) == list(range(1, len(kids) + 1))
    snap = read_run(run_dir).snapshot_at(t)
    assert snap is not None
    for leaf in snap.leaves:
        assert rows[leaf.leaf]["usage_gpu_hours"] == leaf.usage_gpu_hours


def test_status_table_names_drained_nodes_and_cluster_occupancy(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--state", str(state_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cluster gpulab at ")
    assert "drained: n4 since" in out
    assert "GPUs busy" in out


def test_usage_by_team_is_the_ledger_window(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    st = read_state(state_dir)
    ledger = Ledger(state_dir / "ledger.sqlite")
    want = ledger.usage(st.now, 7 * 86400)
    ledger.close()
    got = _json(capsys, "usage", "--state", str(state_dir), "--format", "json")
    by = {r["key"]: r["gpu_hours"] for r in got["rows"]}
    assert want and {k: pytest.approx(v) for k, v in want.items()} == {k: by[k] for k in want}
    assert by["teama1"] > 0
    users = _json(capsys, "usage", "--state", str(state_dir), "--by", "user", "--format", "json")
    assert sum(r["gpu_hours"] for r in users["rows"]) == pytest.approx(sum(want.values()))


def test_reconciler_status_is_still_there_and_judged_against_the_clock(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = read_status(state_dir)
    # at its last tick the reconciler had nothing left to change
    assert re.search(r"Ready +True  Synced", render_text(status, status.last_tick + status.interval_s))
    # the fixture ticked on a fixed clock long past: by the wall clock it is not running
    assert main(["status", "--reconciler", "--state", str(state_dir)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"Ready +False Stale: last tick", out)
    assert f"last applied revision    {status.last_applied_revision}" in out


def test_status_of_another_cluster_is_refused(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--run", str(run_dir), "--cluster", "h100"]) == 2
    assert "this view is of cluster b200" in capsys.readouterr().err


def test_serve_on_a_busy_port_is_a_usage_error(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve", "--state", str(state_dir), "--port", str(port)]) == 2
    assert f"--port {port}:" in capsys.readouterr().err


def test_status_json_times_are_rfc3339_and_run_seconds_are_named_t_s(
    state_dir: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from allotment.timefmt import parse_rfc3339

    live = _json(capsys, "status", "--state", str(state_dir), "--format", "json")
    assert "t" not in live and "t_s" not in live
    assert parse_rfc3339(live["time"]) == read_state(state_dir).now
    (drained,) = live["drained"]
    assert drained["since"].endswith("Z") and "since_t_s" not in drained
    run = _json(capsys, "status", "--run", str(run_dir), "--at", "3600", "--format", "json")
    assert run["t_s"] == 3600 and run["time"] == "2026-12-01T01:00:00Z"  # the run starts 1 Dec 00:00 UTC


@pytest.mark.parametrize(
    ("at", "says"),
    [("1e99", "more than 3,650 days"), ("9999-12-31", "more than 3,650 days"),
     ("-1e12", "more than 3,650 days"), ("nan", "not a number"), ("inf", "more than 3,650 days")],
)
def test_a_time_no_run_can_reach_is_a_usage_error_not_an_overflow(
    run_dir: Path, capsys: pytest.CaptureFixture[str], at: str, says: str
) -> None:
    # 1e99 s overflowed the clock that prints the moment (a traceback) before --at was bounded
    for command in ("status", "explain"):
        argv = [command, *(["j1"] if command == "explain" else []), "--run", str(run_dir), f"--at={at}"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
