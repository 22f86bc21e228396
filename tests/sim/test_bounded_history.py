"""What a long run keeps of jobs that have ended stays bounded (issue 27 item 4, issue 32 item
5): the usage ledger holds its last lookbacks of charge changes, not every one since t = 0."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim import switch
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def test_the_ledger_keeps_its_last_lookbacks_not_the_whole_run() -> None:
    """4,000 one-GPU jobs of 10 minutes over 40 lookbacks (one hour each): 8,000 charge changes;
    what the ledger keeps is what its last lookbacks hold (a few hundred a team, not 4,000)."""
    config = make_config({"a": 1.0, "b": 1.0}, nodes=2, policy=Policy(lookback_s=3600, fairshare_period_s=300))
    jobs = [JobSpec(id=f"j{i:05d}", submit=i * 36.0, account="ab"[i % 2], gpus=1, work=600.0, user="u")
            for i in range(4000)]
    sim = switch.start(config, Workload.of(jobs), cluster=config.largest_cluster(), days=40 * HOUR / 86400)
    switch.finish(sim)
    assert sim.ledger.total_gpu_hours("a", 40 * HOUR) > 300  # 2,000 jobs of 10 minutes charged
    kept = {a: len(c.times) for a, c in sim.ledger._curves.items()}
    assert kept and max(kept.values()) < 800, kept
