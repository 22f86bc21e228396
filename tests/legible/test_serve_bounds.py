"""Issue 32, item 4: ``allot serve`` closes a connection that sends nothing, serves at most
``MAX_WORKERS`` at once, and answers a bad state file with a one-line 503, never an empty reply
(400 slow and 200 silent loopback connections held 401 threads; an audit line without
``dry_run`` or a deeply nested ``observation.json`` emptied the page)."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from allotment.legible import serve
from allotment.reconcile.observation_file import OBSERVATION_FILE
from tests.legible.test_serve import _get, _serving


@pytest.fixture
def state(state_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "state"
    shutil.copytree(state_dir, out)
    return out


def test_a_silent_connection_is_closed_after_the_timeout(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert 0 < serve._Handler.timeout <= 10  # the default: within Prometheus' scrape limit
    monkeypatch.setattr(serve._Handler, "timeout", 0.5)  # the same mechanism, faster
    with _serving(state) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as s:
            s.settimeout(5)
            t0 = time.monotonic()
            assert s.recv(1) == b""  # closed by the server, not by our own timeout
            assert time.monotonic() - t0 < 4


def test_silent_connections_never_hold_more_than_max_workers_threads(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve._Handler, "timeout", 3.0)
    with _serving(state) as url:
        host, port = url.removeprefix("http://").split(":")
        before = threading.active_count()
        conns = [socket.create_connection((host, int(port))) for _ in range(40)]
        try:
            time.sleep(0.5)
            assert threading.active_count() - before <= serve.MAX_WORKERS
        finally:
            for c in conns:
                c.close()
        assert _get(url + "/status.json")[0] == 200  # and it still answers


def test_an_audit_line_without_dry_run_still_shows_the_page(state: Path) -> None:
    line = {"phase": "outcome", "seq": 0, "batch": "x", "time": 1.0, "action": "requeue",
            "target": "j1", "rule": "r", "reason": "why", "result": "applied"}
    with (state / "audit.jsonl").open("a") as f:
        f.write(json.dumps(line) + "\n")
    with _serving(state) as url:
        code, body = _get(url + "/")
    assert code == 200 and "j1" in body


def test_a_deeply_nested_observation_is_a_one_line_503(state: Path) -> None:
    (state / OBSERVATION_FILE).write_text("[" * 100_000 + "]" * 100_000)
    with _serving(state) as url:
        for path in ("/", "/metrics", "/status.json"):
            code, body = _get(url + path)
            assert code == 503 and len(body.strip().splitlines()) == 1, (path, body)
            assert OBSERVATION_FILE in body
