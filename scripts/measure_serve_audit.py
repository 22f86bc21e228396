"""Time ``allot serve``'s /metrics on a state dir whose audit log has N lines (issue 32, item 4).

    PYTHONPATH=src /usr/bin/time -v python scripts/measure_serve_audit.py 1000000 . [SCRAPES]

The second argument is the checkout whose ``tests/`` builds the state dir (its reconciler tick).
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path


def main(n: int, checkout: str, scrapes: int) -> None:
    sys.path.insert(0, checkout)
    from tests.legible.livestate_fixture import make_state_dir

    from allotment.legible.serve import make_server

    state = make_state_dir(Path(tempfile.mkdtemp()))
    line = {
        "phase": "outcome", "batch": "b", "seq": 0, "time": 1.0, "action": "set_priority",
        "target": "j1", "rule": "order", "dry_run": False, "result": "applied",
        "reason": "the core's order: rank 3 of 12 in its team's queue",
        "revision": "c158eb54057a0a168eaa085757ed3e3ca54d892c", "value": 123456,
    }
    with (state / "audit.jsonl").open("a") as f:
        for i in range(n):
            line["seq"], line["target"] = i, f"j{i % 5000}"
            f.write(json.dumps(line, sort_keys=True) + "\n")
    print("audit MB", round((state / "audit.jsonl").stat().st_size / 1e6), flush=True)
    srv = make_server(state, "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/metrics"
    for k in range(scrapes):
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as r:
            r.read()
        print(f"scrape {k + 1}: {time.perf_counter() - t:.2f} s", flush=True)
    srv.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
