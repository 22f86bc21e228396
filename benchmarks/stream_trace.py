"""A seeded canonical trace of any length for the bundled example's h100 cluster, to measure
what ``allot simulate --trace`` holds as the trace grows (issue 32, item 5).

    python benchmarks/stream_trace.py OUT.jsonl [--jobs 1000000] [--seed 1] [--load 0.7]
    /usr/bin/time -v allot simulate --trace OUT.jsonl --json -

Independent jobs of the bundled teams (no dependencies), 1-8 GPUs on one node and now and then
a whole-node gang of 16-64, log-normal run times around 20 minutes clipped to [1 min, 1 day],
Poisson arrivals at ``--load`` of the 1,024 GPUs: the jobs alive at once stay about the same
however long the trace, so a replay whose memory grows with ``--jobs`` holds the file, not the
jobs.  Seeded: the same arguments write the same bytes (the file is not committed: 1M jobs are
about 150 MB).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

TEAMS = ("chem-llm", "citations", "core-lm", "data-mix", "interpretability", "molmo", "navigation",
         "paper-qa", "red-team", "reward-models", "robotics", "safety-evals", "scaling", "tulu", "video")
SIZES = (1, 1, 1, 2, 2, 4, 8, 8, 16, 64)
GPUS = 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=0.7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    mean_work = 1200.0 * math.exp(0.8**2 / 2)  # the log-normal's mean (clipping aside)
    mean_gpus = sum(SIZES) / len(SIZES)
    rate = args.load * GPUS / (mean_gpus * mean_work)  # jobs a second
    t = 0.0
    with args.out.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "header", "version": 1, "source": "benchmarks/stream_trace.py",
                            "seed": args.seed}, separators=(",", ":")) + "\n")
        for i in range(args.jobs):
            t += rng.expovariate(rate)
            gpus = rng.choice(SIZES)
            team = rng.choice(TEAMS)
            work = min(86400.0, max(60.0, rng.lognormvariate(math.log(1200.0), 0.8)))
            job = {"id": f"j{i:07d}", "submit": round(t, 3), "user": f"u{rng.randrange(40)}",
                   "account": team, "gpus": gpus, "work": round(work, 3),
                   "min_runtime": rng.choice((0, 1800, 3600))}
            if gpus > 8:
                job["gpus_per_node"] = 8
            f.write(json.dumps(job, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
