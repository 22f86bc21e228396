"""The client's timeouts and retries against a real local HTTP server (no API server needed):
429/5xx and optimistic-concurrency 409s are retried with backoff, other errors are not, a
refused connection becomes a BackendError after the bounded attempts."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest
from kubernetes.client import ApiClient, Configuration

from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.errors import BackendError


class _Script(BaseHTTPRequestHandler):
    answers: ClassVar[list[tuple[int, dict[str, object]]]] = []
    seen: ClassVar[list[str]] = []

    def _answer(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        status, body = type(self).answers.pop(0) if type(self).answers else (200, {"ok": True})
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_PATCH = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Script.answers, _Script.seen = [], []
    srv = HTTPServer(("127.0.0.1", 0), _Script)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _client(host: str, sleeps: list[float]) -> KubeClient:
    cfg = Configuration()
    cfg.host = host
    return KubeClient(ApiClient(cfg), timeout_s=2, attempts=4, backoff_s=0.1, sleep=sleeps.append)


def _status(code: int, reason: str) -> tuple[int, dict[str, object]]:
    return code, {"kind": "Status", "reason": reason, "message": f"{reason} in test"}


def test_throttling_and_server_errors_are_retried_with_doubling_backoff(server: str) -> None:
    sleeps: list[float] = []
    _Script.answers = [
        _status(429, "TooManyRequests"),
        _status(503, "ServiceUnavailable"),
        (200, {"items": [1]}),
    ]
    assert _client(server, sleeps).get("/api/v1/nodes") == {"items": [1]}
    assert sleeps == [0.1, 0.2]
    assert len(_Script.seen) == 3


def test_an_update_conflict_is_retried_but_already_exists_is_not(server: str) -> None:
    sleeps: list[float] = []
    _Script.answers = [_status(409, "Conflict"), (200, {"ok": 1})]
    assert _client(server, sleeps).get("/x") == {"ok": 1}
    _Script.answers = [_status(409, "AlreadyExists")]
    with pytest.raises(ApiError) as exc:
        _client(server, sleeps).get("/x")
    assert exc.value.status == 409 and "AlreadyExists" in str(exc.value)


def test_a_persistent_failure_gives_up_after_the_bounded_attempts(server: str) -> None:
    sleeps: list[float] = []
    _Script.answers = [_status(500, "InternalError")] * 4
    with pytest.raises(BackendError, match="failed after 4 attempts: HTTP 500"):
        _client(server, sleeps).get("/x")
    assert sleeps == [0.1, 0.2, 0.4]


def test_a_refused_connection_is_a_backend_error_not_a_traceback() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(BackendError, match="unreachable"):
        _client(f"http://127.0.0.1:{port}", []).get("/api/v1/nodes")
