"""``allot serve``: read-only, loopback by default, the page's sections, and ``/metrics``
agreeing with ``allot status --format json``."""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from allotment.cli.main import build_parser, main
from allotment.legible.serve import LiveServer, make_server
from allotment.reconcile.audit import audit_time, entry_time
from allotment.reconcile.status import STALE_TICKS, read_status


@contextlib.contextmanager
def _serving(state_dir: Path, **kw: Any) -> Iterator[str]:
    srv = make_server(state_dir, "127.0.0.1", 0, **kw)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()


@pytest.fixture
def server(state_dir: Path) -> Iterator[str]:
    with _serving(state_dir, refresh_s=5) as url:
        yield url


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
    assert {s.labels["type"] for s in fams["allotment_reconcile_condition"].samples} == {"CapacityDrift", "Ready", "Reconciling", "Stalled"}
    # the fixture ticked on a fixed clock long past: scraped now, the reconciler is not running
    assert value("allotment_reconcile_condition", type="Ready", reason="Stale") == 0


def test_metrics_serve_the_tick_duration_and_result_that_status_json_holds(
    server: str, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = _get(server + "/metrics")
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    # exit 1: the fixture ticked on a clock long past, so it is Stale (not Ready) now
    assert main(["status", "--reconciler", "--state", str(state_dir), "--format", "json"]) == 1
    st = json.loads(capsys.readouterr().out)
    assert st["ticks"] == 4 and st["last_tick_result"] == "success" and st["last_tick_duration_s"] > 0
    (last,) = fams["allotment_reconcile_last_tick_duration_seconds"].samples
    assert last.value == st["last_tick_duration_s"] and last.labels["result"] == "success"
    ticks = {s.labels["result"]: s.value for s in fams["allotment_reconcile_ticks"].samples if s.name.endswith("_total")}
    assert ticks == {"success": 4.0} == {k: float(v) for k, v in st["tick_results"].items()}
    hist = fams["allotment_reconcile_duration_seconds"].samples
    buckets = {s.labels["le"]: s.value for s in hist if s.name.endswith("_bucket")}
    assert buckets == {k: float(v) for k, v in st["tick_duration_buckets"].items()}
    assert buckets["+Inf"] == 4.0
    assert next(s.value for s in hist if s.name.endswith("_count")) == 4.0
    assert next(s.value for s in hist if s.name.endswith("_sum")) == pytest.approx(st["tick_duration_sum_s"])


def _ready(fams: dict[str, Any]) -> tuple[float, str]:
    s = next(s for s in fams["allotment_reconcile_condition"].samples if s.labels["type"] == "Ready")
    return s.value, s.labels["reason"]


@pytest.mark.parametrize(("after_ticks", "ready", "reason"), [(1, 1.0, "Synced"), (STALE_TICKS + 1, 0.0, "Stale")])
def test_page_and_metrics_judge_the_conditions_by_the_servers_clock(
    state_dir: Path, after_ticks: int, ready: float, reason: str
) -> None:
    st = read_status(state_dir)
    now = st.last_tick + after_ticks * st.interval_s
    with _serving(state_dir, clock=lambda: now) as url:
        _, body = _get(url + "/")
        _, text = _get(url + "/metrics")
    assert _ready({f.name: f for f in text_string_to_metric_families(text)}) == (ready, reason)
    assert f"last tick {after_ticks * st.interval_s:.0f} s ago" in body
    assert f"took {st.last_tick_duration_s:.3g} s, success" in body
    mark = "true" if ready else "false"
    assert f'<b>Ready</b> <span class="c-{mark}">{mark.title()}</span> {reason}' in body


def test_an_action_in_flight_is_shown_so_and_the_audit_log_is_left_as_it_is(state_dir: Path, tmp_path: Path) -> None:
    live = tmp_path / "state"
    shutil.copytree(state_dir, live)
    lines = [json.loads(x) for x in (live / "audit.jsonl").read_text().splitlines()]
    intent = next(a for a in lines if a["phase"] == "intent" and a["action"] == "set_priority")
    later = entry_time(intent) + 600
    batch = f"{later:.3f}/{intent['revision'][:12]}"
    with (live / "audit.jsonl").open("a") as f:  # the reconciler, between intent and outcome
        f.write(json.dumps(intent | {"time": audit_time(later), "batch": batch, "seq": 0}) + "\n")
    before = (live / "audit.jsonl").read_bytes()
    with _serving(live) as url:
        _, body = _get(url + "/")
    assert (live / "audit.jsonl").read_bytes() == before  # a viewer never repairs the log
    actions = body[body.index('id="actions"'):]
    newest = actions[actions.index("<tr><td"):].split("</tr>")[0]
    assert f"<td>{intent['target']}</td>" in newest and "<td>in flight</td>" in newest
    assert actions.count("<td>set_priority</td>") == sum(1 for a in lines if a["action"] == "set_priority") // 2 + 1


def test_server_class_is_the_standard_library_one() -> None:
    from http.server import ThreadingHTTPServer

    assert issubclass(LiveServer, ThreadingHTTPServer)


def test_without_an_observation_the_page_says_so_rather_than_none(state_dir: Path, tmp_path: Path) -> None:
    bare = tmp_path / "state"
    shutil.copytree(state_dir, bare)
    (bare / "sim.json").unlink()
    (bare / "observation.json").unlink()
    with _serving(bare) as url:
        code, body = _get(url + "/")
    assert code == 200
    assert "no observation in this state dir" in body and "unknown: no observation" in body


def test_healthz_answers_while_a_slow_request_holds_the_state_lock(state_dir: Path) -> None:
    """Liveness must not wait behind a page being built (the merge of the serialised state
    reads with ``/healthz``): a probe that timed out would restart a healthy viewer."""
    srv = make_server(state_dir, "127.0.0.1", 0, refresh_s=5)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/healthz"
    try:
        with srv.lock, urllib.request.urlopen(url, timeout=5) as r:  # as a slow request would
            assert (r.status, r.read()) == (200, b"ok\n")
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
