"""The checker's reading of the debug overdraft's yield (``tests/sim/checked.py``): a team may
go beyond its cap *within* a pass -- a debug job the overdraft admits by its protection starts --
and the yield then takes a debug job past its protection for the team's capped work, by the
rule's own terms (``core.debug_overdraft``: "while its team runs beyond a cap").  The checker
read "beyond" before the pass only and called that yield outside its terms: a case the
invariants property drew (stop 56), kept here whole so it is checked on every run, not only
when the property draws it again."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.debug_overdraft import YIELD_RULE
from allotment.core.jobs import JobSpec
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.checked import CheckedSim


def _job(i: str, submit: float, gpus: int, work: float, mr: float, *, resumable: bool = False,
         kind: str = "debug") -> JobSpec:
    return JobSpec(id=i, submit=submit, account="t0", gpus=gpus, work=work, min_runtime=mr, user="u1",
                   resumable=resumable, kind=kind)


def test_a_yield_after_a_debug_job_took_its_team_beyond_the_cap_in_the_same_pass_is_within_its_terms() -> None:
    policy = Policy(lookback_s=3600, min_runtime_cap_s=3600, default_min_runtime_s=600, debug_threshold_s=900,
                    reconcile_interval_s=0, fairshare_period_s=60, debug_over_cap=2,
                    debug_over_cap_admits="protection")
    config = make_config({"t0": 1}, nodes=1, gpus_per_node=4, max_gpus={"t0": 2}, policy=policy)
    jobs = [
        _job("d000", 0.0, 2, 120.0, 300.0),  # debug beyond the cap beside ``long``
        *(_job(f"j{i:03d}", 0.0, 1, 60.0, 0.0) for i in range(14)),  # free work on the rest
        _job("j014", 0.0, 1, 60.0, 1800.0),  # capped work: protected longer than the threshold
        _job("long", 0.0, 2, 3600.0, 300.0, resumable=True, kind="batch"),  # debug by its protection
        _job("d001", 300.0, 1, 120.0, 300.0),  # arrives as long's protection ends
    ]
    sim = CheckedSim(config, Workload.of(jobs, ()))
    sim.log.kept = []
    sim.run()
    taken = [(e.t, e.job, e.by) for e in sim.log.kept if e.event == "preempt" and e.rule == YIELD_RULE]
    # the pass at 300 s starts d001 beyond the cap (2 + 1 > 2), then long yields to j014
    assert taken == [(300.0, "long", "j014")]
    starts = {e.job for e in sim.log.kept if e.event == "start" and e.t == 300.0}
    assert {"d001", "j014"} <= starts
    assert sim.violations == []
