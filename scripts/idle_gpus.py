"""Where a run's idle GPU-hours come from, read from its event log (``allot simulate --events``).

Between two events every healthy GPU that runs nothing is idle; each such interval is put in one
class: nothing waits; what waits fits no free space (with the smallest waiting job and the most
GPUs free on one node, which tells fragmentation from size); a waiting job would fit and a
reservation holds nodes; a waiting job would fit and none holds.  A job of up to a node's GPUs
fits a node with that many free; a larger one needs that many whole free nodes' worth.

    python scripts/idle_gpus.py run.events.jsonl
"""

from __future__ import annotations

import collections
import json
import sys


def main(path: str) -> None:
    used: collections.Counter[str] = collections.Counter()
    cap: dict[str, int] = {}
    pend: dict[str, int] = {}
    run: dict[str, list[tuple[str, int]]] = {}
    held: dict[str, list[str]] = {}
    unhealthy: set[str] = set()
    idle: collections.Counter[str] = collections.Counter()
    last: float | None = None
    end = 0.0

    def account(t0: float, t1: float) -> None:
        dt = t1 - t0
        free = {n: cap[n] - used[n] for n in cap if n not in unhealthy}
        tot = sum(free.values())
        if dt <= 0 or tot <= 0:
            return
        if not pend:
            idle["nothing waits"] += tot * dt
            return
        most = max(free.values())
        per_node = max(cap.values())
        whole = sum(1 for n, v in free.items() if v == cap[n])
        fits = any(g <= most if g <= per_node else whole * per_node >= g for g in pend.values())
        if not fits:
            small = min(pend.values())
            idle[f"no fit: smallest waiting {small} GPUs, at most {most} free on a node"] += tot * dt
        elif held:
            idle["a waiting job fits; a reservation holds nodes"] += tot * dt
        else:
            idle["a waiting job fits; no reservation"] += tot * dt

    with open(path, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "header":
                cap, end = dict(e["nodes"]), e["end"]
                continue
            t = e["t"]
            if last is not None:
                account(last, t)
            last = t
            k, job = e["event"], e.get("job")
            if (k == "submit" and not e.get("held")) or k == "eligible":
                pend[job] = e["gpus"]
            elif k == "start":
                pend.pop(job, None)
                held.pop(job, None)
                run[job] = list(zip(e["nodes"], e["node_gpus"], strict=True))
                for n, g in run[job]:
                    used[n] += g
            elif k in ("end", "preempt"):
                for n, g in run.pop(job, []):
                    used[n] -= g
                if k == "preempt" and e.get("requeued"):
                    pend[job] = e["gpus"]
            elif k == "reject":
                pend.pop(job, None)
            elif k == "reserve":
                held[job] = e["nodes"]
            elif k == "release":
                held.pop(job, None)
            elif k == "drain" and e.get("state") == "unhealthy":
                unhealthy.add(e["node"])
            elif k == "resume":
                unhealthy.discard(e["node"])
    if last is not None:
        account(last, end)
    total = sum(cap.values()) * end
    for what, v in idle.most_common():
        print(f"{what:60s} {v / 3600:9.0f} GPU-h  {v / total:.4f} of capacity")
    print(f"{'idle, all':60s} {sum(idle.values()) / 3600:9.0f} GPU-h  {sum(idle.values()) / total:.4f} of capacity")


if __name__ == "__main__":
    main(sys.argv[1])
