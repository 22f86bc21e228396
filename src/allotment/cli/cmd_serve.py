"""``allot serve --state DIR``: a small read-only web page of the live reconciler (budget tree
usage vs entitlement, the queue with each job's sort key, drained nodes, the last audited
actions), refreshing itself, ``/metrics`` for Prometheus, and ``/healthz`` and ``/readyz`` for
probes.  Binds to loopback unless told."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", default=Path(".allot-reconcile"), type=Path, help="the reconciler's state dir")
    p.add_argument("--port", type=int, default=8080, help="TCP port on the bind address")
    p.add_argument("--bind", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--refresh", type=int, default=10, help="seconds between page refreshes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from allotment.errors import UsageError
    from allotment.legible.livestate import read_state
    from allotment.legible.serve import make_server

    read_state(args.state)  # fail now (exit 2) rather than on the first request
    try:
        server = make_server(args.state, args.bind, args.port, refresh_s=args.refresh)
    except OSError as exc:
        raise UsageError(f"--bind {args.bind} --port {args.port}: {exc.strerror or exc}") from None
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(f"serving {args.state} on http://{host}:{port}/ (metrics at /metrics, probes at /healthz /readyz); Ctrl-C stops", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
