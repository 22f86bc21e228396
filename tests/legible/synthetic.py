"""A synthetic run dir at scale (a month of a 1024-GPU cluster, ~60,000 job runs like the ai2
scenario), for the report's size bound without a half-minute simulation in the test."""

from __future__ import annotations

import json
import random
from pathlib import Path

from allotment.core.jobs import JobSpec
from allotment.sim.events import RunHeader
from allotment.traces.writer import sorted_items, write_trace

PROGRAMS = {"olmo": ("core-lm", "tulu", "scaling"), "prior": ("robotics", "navigation", "vision"),
            "science": ("chem-llm", "citations", "paper-qa"), "safety": ("red-team", "evals", "interp")}


def big_run_dir(out: Path, *, gpus: int = 1024, days: float = 30, seed: int = 1) -> Path:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    nodes = gpus // 8
    leaves = [leaf for ls in PROGRAMS.values() for leaf in ls]
    tree = [{"name": "org", "parent": None, "entitlement_gpus": {"c": gpus}}]
    tree += [{"name": p, "parent": "org", "entitlement_gpus": {"c": gpus / 4}} for p in PROGRAMS]
    tree += [{"name": leaf, "parent": p, "entitlement_gpus": {"c": gpus / 12}} for p, ls in PROGRAMS.items() for leaf in ls]
    compiled = {"at": "2026-12-01", "clusters": {"c": {"lookback_s": 604800, "node_groups": [
        {"first": "n001", "count": nodes, "gpus_per_node": 8, "gpu_type": "h100", "name": "main"}]}}, "nodes": tree}
    end = days * 86400
    events: list[dict[str, object]] = []
    jobs: list[JobSpec] = []
    for n in range(nodes):
        for _lane in range(2):
            t = rng.uniform(0, 3600)
            while t < end:
                jid = f"j{len(jobs):06d}"
                leaf = rng.choice(leaves)
                dur = rng.expovariate(1 / (3 * 3600))
                unalloc = rng.random() < 0.2
                jobs.append(JobSpec(jid, t, leaf, 4, dur, min_runtime=0.0 if unalloc else None))
                node = f"n{n + 1:03d}"
                events.append({"t": t, "event": "submit", "job": jid, "account": leaf, "gpus": 4})
                events.append({"t": t, "event": "start", "job": jid, "account": leaf, "gpus": 4,
                               "nodes": [node], "node_gpus": [4], "allocated": not unalloc})
                stop = min(end, t + dur)
                if rng.random() < 0.1:
                    events.append({"t": stop, "event": "preempt", "job": jid, "account": leaf, "gpus": 4,
                                   "by": jid, "rule": "reclaim", "reason": "r", "lost_gpu_hours": 0.1})
                else:
                    events.append({"t": stop, "event": "end", "job": jid, "account": leaf, "gpus": 4})
                t = stop + rng.uniform(0, 600)
    events.sort(key=lambda e: float(e["t"]))  # type: ignore[arg-type]
    snaps = [{"t": h * 3600.0, "nodes": [{"node": x["name"], "share": 1 / 12 if x["parent"] in PROGRAMS else 0.25 if x["parent"] else 1.0,
                                          "usage_gpu_hours": 0.0} for x in tree],
              "leaves": [{"leaf": leaf, "tier": 0, "rank": i, "usage_gpu_hours": rng.uniform(0, 9000),
                          "entitlement_gpus": gpus / 12, "running_gpus": 0, "pending_gpus": 0} for i, leaf in enumerate(leaves)]}
             for h in range(int(days * 24) + 1)]
    meta = {"format_version": 1, "allot_version": "test", "config_sha256": "0" * 64, "policy": "budgets",
            "cluster": "c", "seed": seed, "days": days, "scenario": "synthetic",
            "t0": "2026-12-01T00:00:00+00:00", "capacity_gpus": gpus, "no_skip": False}
    (out / "meta.json").write_text(json.dumps(meta))
    (out / "compiled.json").write_text(json.dumps(compiled))
    (out / "metrics.json").write_text(json.dumps({"policy": "budgets"}))
    header = RunHeader(policy="budgets", cluster="c", seed=seed, end=end, capacity_gpus=gpus,
                       nodes={f"n{n + 1:03d}": 8 for n in range(nodes)}, entitlement_gpus={x: gpus / 12 for x in leaves},
                       ceilings={}, debug_threshold_s=900.0, debug_max_gpus=8, teams=tuple(sorted(leaves)))
    (out / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [header.to_json(), *events]))
    (out / "fairshare.jsonl").write_text("".join(json.dumps(s) + "\n" for s in snaps))
    write_trace(out / "trace.jsonl", sorted_items(jobs, ()))
    return out
