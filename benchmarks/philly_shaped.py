"""A generated workload shaped like the Philly trace summary, as a CSV for ``allot trace import``.

    python benchmarks/philly_shaped.py OUT.csv [--jobs 82000] [--days 108] [--seed 1] [--sweep-users 1]
    allot trace import --format csv OUT.csv -o OUT.jsonl --repo-out REPO --gpus 512 \
        --map id=id,submit=submit,work=work,gpus=gpus,gpus_per_node=gpus_per_node,account=account,user=user

Why: the bundled ``ai2`` scenario never queues more than about 50 jobs per account, and issue 27
found a cost (re-scoring whole per-account queues) that only shows when one account holds
thousands.  The Philly trace itself (Jeon et al., ATC '19; 82,247 jobs over 108 days, 1-128 GPUs,
run times 1 s to 53 days) is not in ``/work/shared/traces``, so this writes a workload with the
same summary: mostly 1-GPU jobs, powers of two up to 128 (8 GPUs per node beyond 8), log-normal
run times clipped to [1 s, 53 days], a daily rhythm of arrivals, 14 accounts of Zipf-like weight,
and one account that submits hyper-parameter sweeps (bursts of 200-3,000 1-GPU jobs), so that
it holds up to about 2,000 pending jobs on a 512-GPU cluster (1,971 in the first 27 days).
Seeded: the same arguments write the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import math
import random
from pathlib import Path

DAY = 86400.0
MAX_WORK = 53 * DAY
# GPUs per job and their share of jobs (Philly: most jobs use one GPU)
SIZES = (1, 2, 4, 8, 16, 32, 64, 128)
SIZE_W = (0.78, 0.07, 0.07, 0.05, 0.017, 0.008, 0.003, 0.002)
ACCOUNTS = 14
SWEEPER = "vc-sweep"  # the account that submits sweeps


def work_s(rng: random.Random, gpus: int) -> int:
    """Run time: log-normal around 10 minutes (larger jobs run longer), clipped to [1 s, 53 d]."""
    mu = math.log(600.0) + 0.35 * math.log2(gpus)
    return int(min(MAX_WORK, max(1.0, rng.lognormvariate(mu, 2.2))))


def submit_s(rng: random.Random, days: float) -> float:
    """An arrival time with a daily rhythm (twice as many by day as by night)."""
    while True:
        t = rng.uniform(0.0, days * DAY)
        if rng.random() < 0.5 + 0.5 * math.sin(math.pi * (t % DAY) / DAY):
            return t


def rows(jobs: int, days: float, seed: int, sweep_users: int = 1) -> list[tuple[int, int, int, int, int, str, str]]:
    """(id, submit, work, gpus, gpus_per_node, account, user), by submit then id.  Each sweep
    is one user's (``sweep_users`` 1), or spread over that many of the sweeper's users."""
    rng = random.Random(seed)
    accounts = [f"vc{i:02d}" for i in range(ACCOUNTS)]
    weights = [1.0 / (i + 1) for i in range(ACCOUNTS)]
    out: list[tuple[int, int, int, int, int, str, str]] = []
    sweep_jobs = jobs // 5  # a fifth of all jobs are the sweeper's
    while sweep_jobs > 0:  # sweeps: bursts of 200-3,000 one-GPU jobs within a few minutes
        n = min(sweep_jobs, rng.randint(200, 3000))
        t0 = submit_s(rng, days)
        user = rng.randint(0, 9)
        for _ in range(n):
            who = f"s{(user + rng.randrange(sweep_users)) % 10 if sweep_users > 1 else user}"
            out.append((0, int(t0 + rng.uniform(0, 300)), work_s(rng, 1) * 4, 1, 1, SWEEPER, who))
        sweep_jobs -= n
    while len(out) < jobs:
        g = rng.choices(SIZES, SIZE_W)[0]
        a = rng.choices(accounts, weights)[0]
        out.append((0, int(submit_s(rng, days)), work_s(rng, g), g, min(g, 8), a, f"{a}u{rng.randint(0, 24)}"))
    out.sort(key=lambda r: (r[1], r[5], r[6], r[2], r[3]))
    return [(i + 1, *r[1:]) for i, r in enumerate(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--jobs", type=int, default=82_000)
    ap.add_argument("--days", type=float, default=108.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sweep-users", type=int, default=1, help="users per sweep (default 1)")
    a = ap.parse_args()
    with a.out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(("id", "submit", "work", "gpus", "gpus_per_node", "account", "user"))
        w.writerows(rows(a.jobs, a.days, a.seed, a.sweep_users))


if __name__ == "__main__":
    main()
