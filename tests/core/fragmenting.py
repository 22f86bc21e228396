"""Small clusters fragmented by many small jobs of mixed resumability: where consolidation
(``core.consolidation``) has something to move.  A plain function of a ``random.Random``, so a
property can draw cases and a test can count what a fixed set of seeds does."""

from __future__ import annotations

import random

from allotment.compile.model import CompiledConfig, Policy
from allotment.core.jobs import JobSpec
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


def fragmenting_case(rng: random.Random) -> tuple[CompiledConfig, Workload]:
    policy = Policy(consolidate=True, reservations=rng.choice((1, 2)), debug_reclaim=rng.random() < 0.3,
                    default_min_runtime_s=600)
    config = make_config({"t0": 1, "t1": 2, "t2": 1}, nodes=rng.randint(2, 4), gpus_per_node=4, policy=policy)
    jobs = []
    for i in range(rng.randint(10, 30)):
        resumable = rng.random() < 0.7
        jobs.append(JobSpec(
            id=f"j{i:03d}", submit=float(rng.randint(0, 3 * 3600)), account=rng.choice(("t0", "t1", "t2")),
            gpus=rng.choice((1, 1, 2, 3, 4)), work=float(rng.randint(600, 4 * 3600)),
            user=rng.choice(("u1", "u2")), min_runtime=float(rng.choice((0, 600, 1800, 3600))),
            resumable=resumable, checkpoint_interval=600.0 if resumable else None,
            priority=rng.randint(0, 1), kind=rng.choice(("train", "batch")),
        ))
    return config, Workload.of(jobs, ())
