"""Time ``allot serve``'s /metrics on a state dir whose audit log has N lines (issue 32, item 4).

    PYTHONPATH=src /usr/bin/time -v python scripts/measure_serve_audit.py 1000000 . [SCRAPES]
"""
import json, sys, time, threading, urllib.request, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.legible.livestate_fixture import make_state_dir
from allotment.legible.serve import make_server
n = int(sys.argv[1])
d = make_state_dir(Path(tempfile.mkdtemp()))
line = {"phase": "outcome", "batch": "b", "seq": 0, "time": 1.0, "action": "set_priority", "target": "j1",
        "rule": "order", "reason": "the core's order: rank 3 of 12 in its team's queue", "dry_run": False,
        "result": "applied", "revision": "c158eb54057a0a168eaa085757ed3e3ca54d892c", "value": 123456}
with (d / "audit.jsonl").open("a") as f:
    for i in range(n):
        line["seq"] = i; line["target"] = f"j{i % 5000}"
        f.write(json.dumps(line, sort_keys=True) + "\n")
print("audit MB", round((d / "audit.jsonl").stat().st_size / 1e6), flush=True)
srv = make_server(d, "127.0.0.1", 0)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_address[1]}/metrics"
for k in range(int(sys.argv[3]) if len(sys.argv) > 3 else 3):
    t = time.perf_counter(); urllib.request.urlopen(url, timeout=600).read(); print(f"scrape {k+1}: {time.perf_counter()-t:.2f} s", flush=True)
srv.shutdown()
