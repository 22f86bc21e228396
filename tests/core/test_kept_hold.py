"""A reservation kept by its holder (knob ``keep_hold``, docs/design/reservation.md, "A hold kept by
its holder"): a better-ranked tier-0 team's gang does not take it over; a debug job may backfill
its nodes if its protection ends by the hold's first planned start plus the debug threshold, and
however many do, the gang starts by then; with a floor (``keep_hold_min_fraction``), only a holder
asking that fraction of the cluster's GPUs keeps its hold."""

from __future__ import annotations

import pytest

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0
THRESHOLD = 900.0  # Policy().debug_threshold_s


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u")


def _run(jobs: list[JobSpec], policy: Policy) -> SimResult:
    # three teams on two 8-GPU nodes: c runs both nodes (c0 until 1,000 s beside ax, c1 until 2,000 s), so
    # c is above what it is owed and a and b, running nothing, are both in tier 0
    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=2, policy=policy)
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def _base() -> list[JobSpec]:
    # a ran a little before (ax), so b, which used nothing, ranks first among the tier-0 teams
    return [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0),
        _job("c0", "c", 7, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 2000.0, mr=2000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR),
    ]


def test_a_kept_hold_is_not_taken_over_by_a_better_ranked_tier_0_teams_gang() -> None:
    # g holds both nodes from 10 s, due at 2,000 s.  b's gang gb arrives at 500 s and b ranks
    # first: decided afresh each round the hold passes to gb (g's 500 s of drain wasted, g
    # after gb); kept by its holder, g keeps it and starts at 2,000 s, gb after it.
    jobs = [*_base(), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR)]
    today = _run(jobs, Policy())
    assert _start(today, "gb") < _start(today, "g")
    for keep in ("all", "gangs"):
        res = _run(jobs, Policy(keep_hold=keep))
        assert _start(res, "g") == 2000.0
        assert _start(res, "gb") > _start(res, "g")
        assert not [e for e in res.events if e.event == "release" and e.job == "g"]


def test_a_debug_job_backfills_a_kept_hold_if_its_protection_ends_by_the_first_plan_plus_the_threshold() -> None:
    # g's hold is first planned for 2,000 s (the anchor).  Node n0 is free from 1,000 s.  A debug
    # job (8 GPUs, protected and running 600 s) at 1,900 s would still run at 2,000 s: today it
    # may not use the reserved node and waits for the gang; with the kept hold's tolerance its
    # protection ends at 2,500 s <= 2,000 + 900 s, so it starts at once and the gang waits for it.
    # One arriving at 2,350 s (protection to 2,950 s) is past the bound and waits.
    jobs = [*_base(), _job("d1", "b", 8, 1900.0, 600.0), _job("d2", "b", 8, 2350.0, 600.0)]
    today = _run(jobs, Policy())
    assert _start(today, "g") == 2000.0 and _start(today, "d1") >= 2000.0 + HOUR
    strict = _run(jobs, Policy(keep_hold="all", kept_hold_debug=False))
    assert _start(strict, "g") == 2000.0 and _start(strict, "d1") >= 2000.0 + HOUR
    res = _run(jobs, Policy(keep_hold="all"))
    assert _start(res, "d1") == 1900.0
    assert _start(res, "g") == 2500.0 <= 2000.0 + THRESHOLD
    assert _start(res, "d2") >= 2500.0 + HOUR  # refused: it would have held the gang to 2,950 s


def test_a_stream_of_debug_jobs_delays_a_kept_holds_gang_by_at_most_the_threshold_once() -> None:
    # whole-node debug jobs every 60 s from 1,000 s, each protected and running 600 s: each one
    # that starts on a reserved node moves the gang's planned start to its protection's end, and
    # the next one would move it again.  Anchored at the first plan (2,000 s), none may run past
    # 2,000 + 900 s, so the gang starts by 2,900 s however long the stream lasts.
    stream = [_job(f"d{i}", "b", 8, 1000.0 + 60.0 * i, 600.0) for i in range(120)]
    res = _run([*_base(), *stream], Policy(keep_hold="all"))
    g = _start(res, "g")
    assert 2000.0 < g <= 2000.0 + THRESHOLD
    # the tolerance was used: debug jobs started on the reserved nodes after the hold was due
    assert any(e.event == "start" and e.job.startswith("d") and 2000.0 <= e.t < g for e in res.events)


def test_a_run_switched_to_the_same_config_keeps_the_kept_hold() -> None:
    # allot plan rebuilds the scheduler at its switch (sim.switch): the kept holds go with it, as
    # a reconciler would persist them, so the run decides as one never switched (g before gb)
    from allotment.sim import switch

    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=2, policy=Policy(keep_hold="all"))
    workload = Workload.of([*_base(), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR)], ())
    sim = switch.start(config, workload, cluster=config.largest_cluster(), days=1.0)
    sim.log.kept = []
    switch.pause(sim, 400.0)
    head = switch.switched(sim, config)
    head.log.kept = list(sim.log.kept or [])
    switch.finish(head)
    starts = {e.job: e.t for e in head.log.kept if e.event == "start"}
    assert starts["g"] == 2000.0 < starts["gb"]


def test_decide_reads_the_kept_hold_from_the_snapshot_and_returns_it() -> None:
    # the reconciler's path builds a fresh scheduler each tick: what the last tick kept comes in
    # Snapshot.kept_holds and goes out in Decisions.kept_holds.  At 500 s, with g's hold kept
    # (first planned for 2,000 s), g holds; with nothing kept, better-ranked b's gang gb does.
    from allotment.core.context import build_context
    from allotment.core.decide import decide
    from allotment.core.snapshot import KeptHold, NodeState, PendingJob, RunningJob, Snapshot

    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=2, policy=Policy(keep_hold="all"))
    ctx = build_context(config, config.largest_cluster())
    specs = {j.id: j for j in [*_base(), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR)]}
    nodes = tuple(NodeState(n, 8) for n in ("n000", "n001"))
    running = (RunningJob(specs["c0"], 0.0, (("n000", 7),), True, 1000.0),
               RunningJob(specs["c1"], 0.0, (("n001", 8),), True, 2000.0))
    pending = (PendingJob(specs["g"], 10.0, 10.0), PendingJob(specs["gb"], 500.0, 500.0))
    usage = {"a": 100.0 / 3600, "b": 0.0, "c": 16 * 500.0 / 3600}
    kept = Snapshot(nodes, running, pending, usage, kept_holds=(KeptHold("g", 2000.0),))
    d = decide(kept, ctx, 500.0)
    assert [r.job_id for r in d.reservations] == ["g"] and d.kept_holds == (KeptHold("g", 2000.0),)
    fresh = decide(Snapshot(nodes, running, pending, usage), ctx, 500.0)
    assert [r.job_id for r in fresh.reservations] == ["gb"] and fresh.kept_holds == (KeptHold("gb", 2000.0),)


def test_a_gang_below_the_floor_is_not_kept_one_at_it_is() -> None:
    # four nodes (32 GPUs): c runs all of them (n0 until 1,000 s beside ax, n1 until 2,000 s, n2
    # and n3 until 6,000 s).  g (a's, 16 GPUs, half the cluster) holds n0 and n1 from 10 s, due
    # at 2,000 s; better-ranked b's gang gb (16 GPUs) arrives at 500 s.  A floor of half the
    # cluster keeps g's hold (g at 2,000 s, gb after); a floor of three quarters (24 GPUs) does
    # not, and the hold passes to gb as with the knob off.
    jobs = [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0),
        _job("c0", "c", 7, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 2000.0, mr=2000.0),
        _job("c2", "c", 8, 0.0, 6000.0, mr=6000.0), _job("c3", "c", 8, 0.0, 6000.0, mr=6000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR),
    ]

    def run(policy: Policy) -> SimResult:
        return simulate(make_config({"a": 1, "b": 1, "c": 1}, nodes=4, policy=policy), Workload.of(jobs, ()),
                        keep_events=True)

    today = run(Policy())
    assert _start(today, "gb") == 2000.0 < _start(today, "g")
    for keep in ("all", "gangs"):
        at_floor = run(Policy(keep_hold=keep, keep_hold_min_fraction=0.5))
        assert _start(at_floor, "g") == 2000.0 < _start(at_floor, "gb")
        below = run(Policy(keep_hold=keep, keep_hold_min_fraction=0.75))
        assert _start(below, "gb") == 2000.0 < _start(below, "g")
        assert [e.job for e in below.events if e.event == "release"] == [
            e.job for e in today.events if e.event == "release"]


def test_the_floor_is_set_as_a_fraction_of_the_cluster_decimal_or_ratio() -> None:
    from allotment.errors import UsageError
    from allotment.sim.overrides import apply_overrides

    assert apply_overrides(Policy(), {"keep_hold_min_fraction": "1/8"}).keep_hold_min_fraction == 0.125
    assert apply_overrides(Policy(), {"keep_hold_min_fraction": "0.25"}).keep_hold_min_fraction == 0.25
    for bad in ("2", "-0.1", "1/0", "a/8", "nan", "128"):
        with pytest.raises(UsageError, match="fraction from 0 to 1"):
            apply_overrides(Policy(), {"keep_hold_min_fraction": bad})


def test_a_hold_below_the_floor_gives_debug_jobs_no_tolerance() -> None:
    # four nodes, c on all of them (n0 until 1,000 s, n1 until 2,000 s, n2 and n3 until 6,000 s);
    # g (16 GPUs, half the cluster) holds n0 and n1, due at 2,000 s.  A debug job d1 (8 GPUs,
    # protected and running 600 s) at 1,900 s would run past the hold's start.  With g's hold kept
    # (floor half the cluster) the tolerance lets it start and g waits to 2,500 s; with a floor of
    # three quarters g's hold is not kept, so it has no anchor and no tolerance: d1 waits as with
    # the knob off (a tolerance anchored at each round's plan would let a stream drift the gang)
    jobs = [
        _job("ax", "a", 1, 0.0, 100.0, mr=100.0),
        _job("c0", "c", 7, 0.0, 1000.0, mr=1000.0), _job("c1", "c", 8, 0.0, 2000.0, mr=2000.0),
        _job("c2", "c", 8, 0.0, 6000.0, mr=6000.0), _job("c3", "c", 8, 0.0, 6000.0, mr=6000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR), _job("d1", "b", 8, 1900.0, 600.0),
    ]

    def run(policy: Policy) -> SimResult:
        return simulate(make_config({"a": 1, "b": 1, "c": 1}, nodes=4, policy=policy), Workload.of(jobs, ()),
                        keep_events=True)

    today = run(Policy())
    assert _start(today, "g") == 2000.0 < _start(today, "d1")
    kept = run(Policy(keep_hold="gangs", keep_hold_min_fraction=0.5))
    assert _start(kept, "d1") == 1900.0 and _start(kept, "g") == 2500.0
    below = run(Policy(keep_hold="gangs", keep_hold_min_fraction=0.75))
    assert _start(below, "g") == 2000.0
    assert _start(below, "d1") == _start(today, "d1")
