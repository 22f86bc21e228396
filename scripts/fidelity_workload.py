"""Write the fidelity workload: a budget repo and a trace like issue 15's replay, scaled to fit
``make test-fidelity`` (8-11 minutes on the 4 x 8-GPU test cluster).

Four teams at 50/25/15/10; debug jobs of 1-2 GPUs in a 30 s tier, resumable training jobs of
8 or 16 GPUs in 2 m / 5 m tiers, unallocated batch jobs of 4-8 GPUs; node n4 unhealthy for a
quarter of the arrival span.  Two workloads (``--workload``):

* ``arbitrary`` (the default, the gate's): arrivals and node events at any tenth of a second,
  works of any whole second (the job script's unit), 40 debug, 12 training and 16 batch jobs,
  so no p90 is one job's.  Nothing is shaped for the reconciler's tick (issue 30).
* ``aligned`` (the named case of the fourth pass): 40 / 6 / 10 jobs, every work, arrival and
  node event a whole number of reconciler ticks (``TICK_S``), where Slurm's sub-tick launch
  jitter and the tick's read latency cannot decide (docs/fidelity.md).  Its traces are the
  fourth pass's, byte for byte.

Every job checkpoints every ``TICK_S``.  Deterministic: the same seed writes the same bytes.

    python scripts/fidelity_workload.py OUT_DIR [--seed N] [--workload arbitrary|aligned]
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


def jobs(seed: int, workload: str = "aligned") -> list[dict[str, object]]:
    return aligned_jobs(seed) if workload == "aligned" else arbitrary_jobs(seed)


def arbitrary_jobs(seed: int) -> list[dict[str, object]]:
    """Arrivals at tenths of a second, works of whole seconds: on and off the tick alike."""
    rnd = random.Random(seed)
    teams, weights = list(TEAMS), list(TEAMS.values())
    out: list[dict[str, object]] = []

    def add(kind: str, n: int, make: object) -> None:
        for _ in range(n):
            job = {"submit": round(rnd.uniform(0, ARRIVALS_S), 1), "user": "root",
                   "account": rnd.choices(teams, weights)[0], "kind": kind,
                   "checkpoint_interval": TICK_S}
            job.update(make())  # type: ignore[operator]
            out.append(job)

    add("debug", 40, lambda: {"gpus": rnd.choice([1, 1, 2]), "work": rnd.randint(15, 45),
                              "min_runtime": 30})
    add("train", 12, lambda: {"gpus": rnd.choice([8, 8, 16]), "gpus_per_node": 8,
                              "work": rnd.randint(35, 80), "min_runtime": rnd.choice([120, 300]),
                              "resumable": True})
    add("batch", 16, lambda: {"gpus": rnd.choice([4, 8]), "work": rnd.randint(20, 55),
                              "min_runtime": 0, "resumable": True})
    return _numbered(out)


def _numbered(out: list[dict[str, object]]) -> list[dict[str, object]]:
    out.sort(key=lambda j: (j["submit"], j["kind"], j["account"]))  # type: ignore[return-value]
    for i, j in enumerate(out, 1):
        j["id"] = f"f{i:03d}"
    return out


def node_times(seed: int, workload: str) -> tuple[float, float]:
    """When n4 turns unhealthy and healthy again: at half and three quarters of the arrivals,
    on the tick (aligned) or within 10 s of there at a tenth of a second (arbitrary)."""
    if workload == "aligned":
        sick, well = (TICK_S * round(ARRIVALS_S * f / TICK_S) for f in (0.5, 0.75))
        return sick, well
    rnd = random.Random(f"nodes-{seed}")
    sick, well = (round(ARRIVALS_S * f + rnd.uniform(-10, 10), 1) for f in (0.5, 0.75))
    return sick, well


def aligned_jobs(seed: int) -> list[dict[str, object]]:
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
    return _numbered(out)


WORKLOADS = ("arbitrary", "aligned")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--workload", choices=WORKLOADS, default="arbitrary")
    args = ap.parse_args()
    write_repo(args.out / "repo")
    header = {"type": "header", "version": 1, "source": "scripts/fidelity_workload.py",
              "generator": "fidelity_workload", "seed": args.seed, "cluster": "gpulab"}
    if args.workload != "aligned":  # the aligned header stays the fourth pass's
        header["generator"] = f"fidelity_workload --workload {args.workload}"
    lines = [header]
    lines += [{"id": j.pop("id"), **j} for j in jobs(args.seed, args.workload)]
    sick, well = node_times(args.seed, args.workload)
    lines += [{"type": "node", "time": sick, "node": "n4", "state": "unhealthy"},
              {"type": "node", "time": well, "node": "n4", "state": "healthy"}]
    lines.sort(key=lambda x: (0 if x.get("type") == "header" else 1,
                              x.get("submit", x.get("time", 0))))
    text = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)
    (args.out / "trace.jsonl").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
