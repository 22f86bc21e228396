"""A git origin over HTTP that refuses anyone without the token: a private repository, locally.

``file://`` and local-path origins are always readable, so they cannot show that a fetch carries
credentials.  This serves a bare repository with git's own smart-HTTP backend
(``git http-backend``, run as a CGI program per request) behind a check of the ``Authorization``
header, as GitHub does for a private repository: without ``basic base64(x-access-token:TOKEN)``
every request gets 401.  Every request is recorded (path, and whether it was authorised), so a
test can also show that no request was made at all.
"""

from __future__ import annotations

import base64
import http.server
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Requests:
    seen: list[tuple[str, bool]] = field(default_factory=list)  # (path, authorised)


def _handler(root: Path, token: str, log: Requests) -> type[http.server.BaseHTTPRequestHandler]:
    expected = "basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def _serve(self) -> None:
            ok = self.headers.get("Authorization", "").lower() == expected.lower()
            log.seen.append((self.path, ok))
            if not ok:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="private"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            env = {
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "REMOTE_USER": "x-access-token",
            }
            out = subprocess.run(["git", "http-backend"], input=body, env=env,
                                 capture_output=True, check=True).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode().split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = _serve
        do_POST = _serve

    return Handler


@contextmanager
def private_origin(root: Path, token: str) -> Iterator[tuple[str, Requests]]:
    """Serve the bare repositories under ``root``; yields (base URL, the request log)."""
    log = Requests()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(root, token, log))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()
