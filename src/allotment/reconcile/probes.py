"""Liveness and readiness of the reconciler process itself, for a Kubernetes probe or a load
balancer's health check: ``allot reconcile --probe-port N`` serves ``/healthz`` and ``/readyz``
(controller-runtime's names) on ``--probe-bind`` (loopback by default).

* ``/healthz`` (liveness): 503 when a tick has been in flight longer than ``hung_after_s``
  (every command and fetch has a timeout, so a tick that long is a hung process: restart it),
  else 200.  It does not fail because the backend or the source fails: a restart cures neither,
  and the status already says Stalled.
* ``/readyz`` (readiness): 200 once a tick has finished, 503 before.
* ``/metrics``: a replica's lease metrics (``reconcile.lease_metrics``), when it runs with
  ``--leader-elect``; 404 otherwise (the cluster's metrics are ``allot serve``'s).

The loop reports to a ``Heartbeat`` (``started``/``ended`` around each tick); the server reads it
from its own thread.  Times come from ``clock`` (monotonic), so a test can drive them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_EXPOSITION = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus' text format
HUNG_AFTER_MIN_S = 600.0  # at least: a tick that waits out a hung git (60 s) and commands (20 s each)


@dataclass(frozen=True, slots=True)
class Probe:
    ok: bool
    message: str


class Heartbeat:
    def __init__(self, hung_after_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.hung_after_s, self.clock = hung_after_s, clock
        self._lock = threading.Lock()
        self._started: float | None = None  # the tick in flight (None: between ticks)
        self._ticks = 0
        self._standby = False  # a replica waiting for the lease (reconcile.replicas)

    def started(self) -> None:
        with self._lock:
            self._started = self.clock()

    def ended(self) -> None:
        with self._lock:
            self._started = None
            self._ticks += 1

    def live(self) -> Probe:
        with self._lock:
            if self._started is not None and self.clock() - self._started > self.hung_after_s:
                took = self.clock() - self._started
                return Probe(False, f"a tick has been in flight for {took:.0f} s (more than {self.hung_after_s:g} s)")
        return Probe(True, "ok")

    def stand_by(self, standby: bool) -> None:
        with self._lock:
            self._standby = standby
            self._ticks = 0 if not standby else self._ticks

    def ready(self) -> Probe:
        """A standby is ready: it is doing its job (waiting to take over), and a rollout of a
        Deployment whose new pods never turn ready would never finish."""
        with self._lock:
            if self._standby:
                return Probe(True, "standby (another replica leads)")
            return Probe(True, "ok") if self._ticks else Probe(False, "no tick has finished yet")


def hung_after(interval_s: float) -> float:
    return max(3 * interval_s, HUNG_AFTER_MIN_S)


class ProbeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        addr: tuple[str, int],
        heartbeat: Heartbeat,
        metrics: Callable[[], bytes] | None = None,
    ) -> None:
        super().__init__(addr, _Handler)
        self.heartbeat, self.metrics = heartbeat, metrics

    def start(self) -> threading.Thread:
        t = threading.Thread(target=self.serve_forever, name="probes", daemon=True)
        t.start()
        return t


class _Handler(BaseHTTPRequestHandler):
    server: ProbeServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        hb = self.server.heartbeat
        if path == "/metrics" and self.server.metrics is not None:
            self._send(HTTPStatus.OK, self.server.metrics(), _EXPOSITION)
            return
        probe = hb.live() if path == "/healthz" else hb.ready() if path == "/readyz" else None
        if probe is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found: /healthz /readyz\n")
        else:
            code = HTTPStatus.OK if probe.ok else HTTPStatus.SERVICE_UNAVAILABLE
            self._send(code, f"{probe.message}\n".encode())

    do_HEAD = do_GET

    def _send(
        self, code: HTTPStatus, body: bytes, content_type: str = "text/plain; charset=utf-8"
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None
