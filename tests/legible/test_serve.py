"""``allot serve``: read-only, loopback by default, the page's sections, and ``/metrics``
agreeing with ``allot status --format json``."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from allotment.cli.main import build_parser, main
from allotment.legible.serve import LiveServer, make_server


@pytest.fixture
def server(state_dir: Path) -> Iterator[str]:
    srv = make_server(state_dir, "127.0.0.1", 0, refresh_s=5)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    t.join()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read().decode()


def test_serve_binds_to_loopback_unless_told() -> None:
    args = build_parser().parse_args(["serve", "--state", "x"])
    assert args.bind == "127.0.0.1" and args.port == 8080


def test_page_shows_tree_queue_nodes_and_actions_and_refreshes(server: str) -> None:
    code, body = _get(server + "/")
    assert code == 200
    for section in ("tree", "queue", "nodes", "actions"):
        assert f'id="{section}"' in body
    assert '<meta http-equiv="refresh" content="5">' in body
    assert "n4" in body and "set_priority" in body
    assert "<script" not in body


def test_nothing_can_be_changed_through_the_server(server: str, state_dir: Path) -> None:
    before = {p.name: p.read_bytes() for p in state_dir.iterdir() if p.is_file()}
    req = urllib.request.Request(server + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    assert err.value.code == 405
    err.value.close()
    _get(server + "/metrics")
    after = {p.name: p.read_bytes() for p in state_dir.iterdir() if p.is_file()}
    assert after == before


def test_metrics_agree_with_status_json(server: str, state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _get(server + "/metrics")
    assert code == 200
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert main(["status", "--state", str(state_dir), "--format", "json"]) == 0
    view = json.loads(capsys.readouterr().out)
    row = next(r for r in view["tree"] if r["name"] == "teama1")

    def value(name: str, **labels: str) -> float:
        return next(s.value for s in fams[name].samples
                    if all(s.labels.get(k) == v for k, v in labels.items()) and not s.name.endswith("_created"))

    assert value("allotment_account_usage_gpu_hours", account="teama1") == pytest.approx(row["usage_gpu_hours"])
    assert value("allotment_account_entitlement_gpus", account="teama1") == row["entitlement_gpus"]
    assert value("allotment_account_ratio", account="teama1") == pytest.approx(row["ratio"])
    assert value("allotment_running_gpus", account="teama1", allocated="true") == row["running_allocated_gpus"]
    assert value("allotment_pending_gpus", account="teama1") == row["pending_gpus"]
    assert value("allotment_preemptions", rule="drain") == 1
    assert value("allotment_drained_nodes") == len(view["drained"]) == 1
    assert {s.labels["type"] for s in fams["allotment_reconcile_condition"].samples} == {"Ready", "Reconciling", "Stalled"}


def test_server_class_is_the_standard_library_one() -> None:
    from http.server import ThreadingHTTPServer

    assert issubclass(LiveServer, ThreadingHTTPServer)


def test_without_an_observation_the_page_says_so_rather_than_none(state_dir: Path, tmp_path: Path) -> None:
    import shutil

    bare = tmp_path / "state"
    shutil.copytree(state_dir, bare)
    (bare / "sim.json").unlink()
    srv = make_server(bare, "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        code, body = _get(f"http://127.0.0.1:{srv.server_address[1]}/")
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
    assert code == 200
    assert "no observation in this state dir" in body and "unknown: no observation" in body
