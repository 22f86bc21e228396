"""``allot serve``: the live page, ``/status.json`` (what ``allot status --state --format json``
prints) and ``/metrics``, from the standard library's HTTP server.

Read-only by construction: only GET and HEAD are answered, every request re-reads the state
dir, and the applied config is compiled once per revision.  Loopback by default; the page
refreshes itself (``<meta http-equiv=refresh>``), no script.  The reconciler's conditions are
judged at each request by the server's clock (``clock``), so a reconciler that stopped ticking
shows as not Ready (``Stale``) rather than by its last words.

Bounded, so no client can hold it (issue 32, item 4: 400 slow and 200 silent loopback
connections held 401 threads): each connection has ``CONNECTION_TIMEOUT_S`` to send its request
and take its reply, and at most ``MAX_WORKERS`` are served at once; the rest wait in the
listening socket's backlog.  Any fault reading the state dir (a bad file, a line of the wrong
shape, a template that meets it) is a 503 with one line, never an empty reply."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jinja2

from allotment.compile.model import CompiledConfig
from allotment.errors import AllotmentError
from allotment.legible.livestate import (
    AUDIT_FILE,
    AuditTail,
    LiveState,
    applied_config,
    conditions_at,
    read_state,
)
from allotment.legible.liveview import drain_reasons, last_actions, live_view, queue
from allotment.legible.metrics import exposition
from allotment.legible.words import duration, percent

_env = jinja2.Environment(
    loader=jinja2.PackageLoader("allotment", "templates"),
    autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
)


CONNECTION_TIMEOUT_S = 10.0  # to send a request and take its reply (Prometheus' own scrape limit)
MAX_WORKERS = 8  # connections served at once; a page or a scrape takes well under a second


class LiveServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(
        self, state_dir: Path, addr: tuple[str, int], refresh_s: int, clock: Callable[[], float]
    ) -> None:
        super().__init__(addr, _Handler)
        self.state_dir, self.refresh_s, self.clock = state_dir, refresh_s, clock
        self._configs: dict[str | None, CompiledConfig] = {}
        self.workers = threading.BoundedSemaphore(MAX_WORKERS)
        self._audit = AuditTail(state_dir / AUDIT_FILE)  # read on from where the last request stopped
        # one reply computed at a time: the audit digest is shared and extended in place (a
        # reply takes well under a second; sending it, which a slow client can drag out, is not
        # under the lock)
        self.lock = threading.Lock()
        with contextlib.suppress(OSError):  # read the log once now, so no request waits for it
            self._audit.read()

    def state(self) -> LiveState:
        return read_state(self.state_dir, self._audit)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Wait for a free worker before taking the connection on (the accept loop blocks, so
        further clients queue in the backlog instead of each holding a thread)."""
        self.workers.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.workers.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.workers.release()

    def config(self, state: LiveState) -> CompiledConfig:
        rev = state.status.last_applied_revision
        if rev not in self._configs:
            self._configs = {rev: applied_config(state)}
        return self._configs[rev]


def make_server(
    state_dir: Path, bind: str, port: int, *, refresh_s: int = 10,
    clock: Callable[[], float] = time.time,
) -> LiveServer:
    return LiveServer(state_dir, (bind, port), refresh_s, clock)


def page(server: LiveServer, state: LiveState) -> str:
    view = live_view(state, server.config(state))
    reasons = drain_reasons(state)
    now, st = server.clock(), state.status
    took = f", took {st.last_tick_duration_s:.3g} s, {st.last_tick_result}" if st.last_tick_duration_s is not None else ""
    ctx: dict[str, Any] = {
        "view": view, "status": st, "conditions": conditions_at(state, now),
        "last_tick": f"last tick {now - st.last_tick:.0f} s ago ({_utc(st.last_tick)} UTC{took})" if st.ticks else "no tick yet",
        "queue": queue(state)[:200], "actions": last_actions(state),
        "reasons": reasons, "refresh": server.refresh_s, "percent": percent, "duration": duration,
        "utc": _utc, "observed": state.observation is not None,
    }
    return _env.get_template("live.html.j2").render(**ctx)


def _unavailable(message: str) -> tuple[HTTPStatus, str, bytes]:
    line = " ".join(message.split())[:1000]
    return HTTPStatus.SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", f"{line}\n".encode()


def _utc(unix: float) -> str:
    return dt.datetime.fromtimestamp(float(unix), dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


class _Handler(BaseHTTPRequestHandler):
    server: LiveServer
    timeout = CONNECTION_TIMEOUT_S  # the socket's: a silent or slow client is dropped

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        with self.server.lock:
            reply = self._respond(self.path.split("?", 1)[0])
        self._send(*reply)

    def _respond(self, path: str) -> tuple[HTTPStatus, str, bytes]:
        """The reply, computed before anything is sent: a fault is a whole 503, never half a page."""
        try:
            state = self.server.state()
            if path == "/":
                return HTTPStatus.OK, "text/html; charset=utf-8", page(self.server, state).encode()
            if path == "/metrics":
                body = exposition(state, live_view(state, self.server.config(state)), self.server.clock())
                return HTTPStatus.OK, "text/plain; version=0.0.4; charset=utf-8", body
            if path == "/status.json":
                view = live_view(state, self.server.config(state))
                return HTTPStatus.OK, "application/json", json.dumps(view.to_json(), sort_keys=True, indent=2).encode()
            return HTTPStatus.NOT_FOUND, "text/plain", b"not found: / /metrics /status.json\n"
        except AllotmentError as exc:
            return _unavailable(str(exc))
        except (OSError, ValueError, LookupError, TypeError, RecursionError, jinja2.TemplateError) as exc:
            # a state file of a shape no reader expected: say so in one line
            return _unavailable(
                f"cannot read the state in {self.server.state_dir}: {type(exc).__name__}: {exc}"
            )

    def do_POST(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", b"read-only\n")

    do_PUT = do_DELETE = do_PATCH = do_POST

    def _send(self, code: HTTPStatus, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None
