"""Handing a reservation over (knob ``hand_over``, ``core/hand_over.py``, docs/design/reservation.md,
"Handing a hold over"): with ``sooner`` the last holder keeps its hold from a better-ranked tier-0
team's gang that would start later than it; with ``claim`` a holder the hold passed from keeps its
other nodes from work that would outlast its planned start while the new holder drains."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u")


def _run(jobs: list[JobSpec], policy: Policy, nodes: int) -> SimResult:
    # three teams: c runs nearly every node, so c is above what it is owed and a and b, running
    # nothing, are in tier 0; a ran a little before (ax), so b ranks first among them
    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=nodes, policy=policy)
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def test_sooner_the_last_holder_keeps_its_hold_from_a_gang_that_would_start_later() -> None:
    # three nodes: c0 on n0 to 1,000 s, c1 on n1 to 2,000 s, c2 on n2 to 4,000 s.  a's gang g (two
    # nodes) holds n0 and n1 from 10 s, due at 2,000 s.  b's gang gb (three nodes) arrives at 500 s
    # and b ranks first; its hold would be due at 4,000 s.  Decided afresh, the hold passes to gb and
    # g, which would have started at 2,000 s, waits until gb has run; with ``sooner`` g keeps it.
    jobs = [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0),
        _job("c0", "c", 7, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 2000.0, mr=2000.0),
        _job("c2", "c", 8, 0.0, 4000.0, mr=4000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR), _job("gb", "b", 24, 500.0, HOUR, mr=HOUR),
    ]
    today = _run(jobs, Policy(), 3)
    assert _start(today, "gb") == 4000.0 < _start(today, "g")
    for form in ("sooner", "both"):
        res = _run(jobs, Policy(hand_over=form), 3)
        assert _start(res, "g") == 2000.0
        assert _start(res, "gb") == 2000.0 + HOUR
    # a new holder that starts no later takes it over as today
    claim = _run(jobs, Policy(hand_over="claim"), 3)
    assert _start(claim, "gb") == 4000.0 < _start(claim, "g")


def test_claim_a_holder_the_hold_passed_from_keeps_its_other_nodes_while_the_new_one_drains() -> None:
    # five nodes: c0 on n0 to 1,000 s, c1 on n1 to 1,200 s, c2 (4 GPUs) on n2 to 3,000 s, c3 on n3
    # to 5,000 s, c4 on n4 to 6,000 s.  a's gang g (three nodes) holds n0-n2, due at 3,000 s.  b's gang gb (two nodes)
    # arrives at 500 s, ranks first and would start sooner (n0 and n1 at 1,200 s): the hold passes to
    # it.  c's 4-GPU job x arrives at 600 s and fits beside c2.  Today nothing holds n2 while gb
    # drains: x starts there and runs 4 h, and g, once gb has started, gets n3 at 5,000 s.  With
    # ``claim`` g keeps a hold of its own off gb's nodes (n2-n4, due at 6,000 s) while gb drains, x
    # waits, and g starts on n2 and gb's nodes once gb has run (4,800 s).
    jobs = [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0),
        _job("c0", "c", 8, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 1200.0, mr=1200.0),
        _job("c2", "c", 4, 0.0, 3000.0, mr=3000.0), _job("c3", "c", 8, 0.0, 5000.0, mr=5000.0),
        _job("c4", "c", 8, 0.0, 6000.0, mr=6000.0),
        _job("g", "a", 24, 10.0, HOUR, mr=HOUR), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR),
        _job("x", "c", 4, 600.0, 4 * HOUR, mr=4 * HOUR),
    ]
    today = _run(jobs, Policy(), 5)
    assert _start(today, "gb") == 1200.0
    assert _start(today, "x") == 600.0
    assert _start(today, "g") == 5000.0
    for form in ("claim", "both", "claim-over"):
        res = _run(jobs, Policy(hand_over=form), 5)
        assert _start(res, "gb") == 1200.0
        assert _start(res, "x") > 600.0
        assert _start(res, "g") == 1200.0 + HOUR


def test_claim_over_binds_only_over_served_teams_so_an_under_served_teams_job_still_starts() -> None:
    # the claim test's cluster with a fourth team d, in tier 0 but ranked after a (dx ran longer
    # than ax): d's 4-GPU job x fits beside c2 at 600 s.  A plain claim binds the queues ranked no
    # better than g's, d's among them, so x waits; ``claim-over`` binds only tier-1 (over-served)
    # teams' starts, so x starts at once, as with no claim.
    jobs = [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0), _job("dx", "d", 2, 0.0, 200.0, mr=200.0),
        _job("c0", "c", 8, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 1200.0, mr=1200.0),
        _job("c2", "c", 4, 0.0, 3000.0, mr=3000.0), _job("c3", "c", 8, 0.0, 5000.0, mr=5000.0),
        _job("c4", "c", 8, 0.0, 6000.0, mr=6000.0),
        _job("g", "a", 24, 10.0, HOUR, mr=HOUR), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR),
        _job("x", "d", 4, 600.0, 4 * HOUR, mr=4 * HOUR),
    ]
    config = make_config({"a": 1, "b": 1, "c": 1, "d": 1}, nodes=5, policy=Policy(hand_over="claim"))
    claim = simulate(config, Workload.of(jobs, ()), keep_events=True)
    assert _start(claim, "gb") == 1200.0 and _start(claim, "x") > 600.0
    config = make_config({"a": 1, "b": 1, "c": 1, "d": 1}, nodes=5, policy=Policy(hand_over="claim-over"))
    over = simulate(config, Workload.of(jobs, ()), keep_events=True)
    assert _start(over, "gb") == 1200.0 and _start(over, "x") == 600.0
