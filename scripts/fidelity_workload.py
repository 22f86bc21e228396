"""Write the fidelity workload: a budget repo and a trace like issue 15's replay, scaled to fit
``make test-fidelity`` (about 7 minutes on the 4 x 8-GPU test cluster).

Four teams at 50/25/15/10; debug jobs of 1-2 GPUs in a 30 s tier, resumable training jobs of
8 or 16 GPUs in 2 m / 5 m tiers, unallocated batch jobs of 4-8 GPUs; node n4 unhealthy from
half way to three quarters.  Every work and checkpoint interval is a whole number of reconciler
ticks (``TICK_S``), and so is every arrival and node event, so the comparison is well posed
against Slurm's sub-tick launch jitter and the tick's own read latency (docs/fidelity.md).  Deterministic: the same seed writes the same bytes.

    python scripts/fidelity_workload.py OUT_DIR [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

TEAMS = {"teama": 50, "teamb": 25, "teamc": 15, "teamd": 10}
ARRIVALS_S = 300  # jobs arrive over the first 5 minutes
TICK_S = 2  # the reconciler's interval.  Every job's work and checkpoint interval is a multiple
# of it, so a run's end lands at its start's phase between two ticks and Slurm's launch jitter
# (under a tick, docs/fidelity.md) cannot carry it across one, after a requeue too; and every
# arrival and node event is at a multiple of it, 0.5 s before the tick that must see it, never
# inside a tick whose reads may come before or after it
POLICY = f"""lookback: 1h
min_runtime_cap: 10m
default_min_runtime: 2m
reconcile_interval: {TICK_S}s
unallocated: true
"""


def ticks(rnd: random.Random, lo_s: int, hi_s: int) -> int:
    """A work drawn in [lo_s, hi_s] in whole ticks."""
    return TICK_S * rnd.randint(-(-lo_s // TICK_S), hi_s // TICK_S)


def write_repo(root: Path) -> None:
    files = {
        "inventory/gpu_types.yaml": "gpu_types:\n  gpu:\n    billing_weight: 1.0\n",
        "inventory/clusters/gpulab.yaml": (
            "node_groups:\n  - name: main\n    gpu_type: gpu\n    gpus_per_node: 8\n"
            "    nodes: n[1-4]\n"
        ),
        "policies/scheduler.yaml": POLICY,
        "budgets/fid/budget.yaml": "owners:\n  - lead@example.com\nchildren:\n"
        + "".join(f"  {t}:\n    share: {s}\n" for t, s in TEAMS.items()),
    }
    for t in TEAMS:
        files[f"budgets/fid/{t}/budget.yaml"] = (
            "owners:\n  - lead@example.com\nmembers:\n  - root\n"
            + ("default_for:\n  - root\n" if t == "teama" else "")
        )
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def jobs(seed: int) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    teams, weights = list(TEAMS), list(TEAMS.values())
    out: list[dict[str, object]] = []

    def add(kind: str, n: int, make: object) -> None:
        for _ in range(n):
            t = TICK_S * round(rnd.uniform(0, ARRIVALS_S) / TICK_S)
            job = {"submit": t, "user": "root", "account": rnd.choices(teams, weights)[0], "kind": kind,
                   "checkpoint_interval": TICK_S}
            job.update(make())  # type: ignore[operator]
            out.append(job)

    add("debug", 40, lambda: {"gpus": rnd.choice([1, 1, 2]), "work": ticks(rnd, 15, 45),
                              "min_runtime": 30})
    add("train", 6, lambda: {"gpus": rnd.choice([8, 8, 16]), "gpus_per_node": 8,
                             "work": ticks(rnd, 50, 110), "min_runtime": rnd.choice([120, 300]),
                             "resumable": True})
    add("batch", 10, lambda: {"gpus": rnd.choice([4, 8]), "work": ticks(rnd, 30, 80),
                              "min_runtime": 0, "resumable": True})
    out.sort(key=lambda j: (j["submit"], j["kind"], j["account"]))
    for i, j in enumerate(out, 1):
        j["id"] = f"f{i:03d}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    write_repo(args.out / "repo")
    header = {"type": "header", "version": 1, "source": "scripts/fidelity_workload.py",
              "generator": "fidelity_workload", "seed": args.seed, "cluster": "gpulab"}
    lines = [header]
    lines += [{"id": j.pop("id"), **j} for j in jobs(args.seed)]
    sick, well = (TICK_S * round(ARRIVALS_S * f / TICK_S) for f in (0.5, 0.75))
    lines += [{"type": "node", "time": sick, "node": "n4", "state": "unhealthy"},
              {"type": "node", "time": well, "node": "n4", "state": "healthy"}]
    lines.sort(key=lambda x: (0 if x.get("type") == "header" else 1,
                              x.get("submit", x.get("time", 0))))
    text = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)
    (args.out / "trace.jsonl").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
