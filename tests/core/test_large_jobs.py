"""Issue 25's rules for large jobs, each on a small hand-made scenario run through the simulator:
a reservation binds every start, of any queue and of the holder's own team; age eventually beats
fit inside a team; a starving job of an under-served team of any size gets a reservation."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.core.starvation import STARVING_S
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u")


def _run(jobs: list[JobSpec], *, nodes: int, spare_gangs: str = "off") -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, policy=Policy(spare_gangs=spare_gangs))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def test_a_gang_behind_its_own_teams_stream_of_fitting_jobs_starts_once_starving_and_drained() -> None:
    # a submits a protected 4-GPU job every 300 s for three days, on 4 nodes (32 GPUs); its own
    # 32-GPU gang scored below every fitting job (fit 1.5 at load >= 2 against capped age 1.0)
    # and each reservation it made was overtaken by its own team's next job: it started only when
    # the stream ended (~390,000 s).  Starving, it counts as fitting, heads its team, holds the
    # nodes, and the stream keeps off them: it starts once the jobs already there end.
    stream = [_job(f"s{i}", "a", 4, 300.0 * i, HOUR, mr=1800.0) for i in range(72 * 12)]
    res = _run([*stream, _job("g", "a", 32, 100.0, 4 * HOUR, mr=HOUR)], nodes=4)
    assert _start(res, "g") <= 100.0 + STARVING_S + HOUR + 600.0


def test_a_reservation_binds_a_better_ranked_teams_start_that_would_overrun_it() -> None:
    # a's gang g holds both nodes from 2,000 s (a1's end).  b has used nothing, so it ranks
    # first; its 3 h jobs arriving from 900 s would each take the node a0 frees at 1,000 s and
    # push the gang back by hours.  The hold is decided before the walk, so they keep off it.
    jobs = [
        _job("a0", "a", 8, 0.0, 1000.0, mr=1000.0), _job("a1", "a", 8, 0.0, 2000.0, mr=2000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR),
        *[_job(f"b{i}", "b", 4, 900.0 + 30.0 * i, 3 * HOUR, mr=3 * HOUR) for i in range(4)],
    ]
    res = _run(jobs, nodes=2)
    assert _start(res, "g") == 2000.0
    assert all(_start(res, f"b{i}") >= 2000.0 + HOUR for i in range(4))  # after the gang, on its nodes


def test_a_starving_seven_gpu_job_of_an_under_served_team_holds_a_node_behind_a_two_gpu_stream() -> None:
    # b keeps one 8-GPU node busy with protected 2-GPU jobs (one every 300 s, 1,800 s each), so a
    # node never has 7 GPUs free; only whole-node jobs could hold a reservation, and a's 7-GPU job
    # waited for the stream's end.  Starving, it holds the node and the stream backfills around it.
    stream = [_job(f"s{i}", "b", 2, 300.0 * i, 1800.0, mr=1800.0) for i in range(300)]
    for gpus in (6, 7, 8):
        res = _run([*stream, _job("x", "a", gpus, 200.0, HOUR)], nodes=1)
        assert _start(res, "x") <= 200.0 + STARVING_S + 1800.0 + 300.0, gpus


# -- the starvation bound, as a property over generated streams ---------------------------------
# docs/design/reservation.md, "The bound": an allocated job of a team within its entitlement (or
# a gang of any team) that heads its team's declared priority starts within STARVING_S, plus the
# longest work already running on the nodes it holds, plus an epoch (starving is read at the
# fair-share period, 5 min) and a few passes, whatever its size and whatever the other teams' or
# its own team's stream -- read from the event log.

EPOCH_AND_PASSES = 300.0 + 60.0
# the victim rule gang-sparing's forms (core/preemption/gang_sparing.py): the bounds hold under each
SPARE_GANGS = st.sampled_from(["off", "class", "first", "wait"])


@st.composite
def _streams(draw: st.DrawFn) -> tuple[list[JobSpec], str, float]:
    nodes = draw(st.integers(1, 4))
    same_team = nodes > 1 and draw(st.booleans())  # the big job in the stream's own team: a gang
    if same_team:
        big_gpus = 8 * draw(st.integers(2, nodes))
    else:
        big_gpus = draw(st.sampled_from([g for g in (1, 2, 4, 6, 7, 8, 16, 24, 32) if g <= 8 * nodes]))
    per_job = draw(st.sampled_from([1, 2, 4]))
    gap = draw(st.sampled_from([60.0, 150.0, 300.0, 600.0]))
    work = draw(st.sampled_from([900.0, 1800.0, 3600.0]))
    protect = draw(st.sampled_from([600.0, work]))
    # in its own team's queue the job is head only once no older job of its team waits: a stream
    # that alone overloads the cluster keeps a backlog of older jobs ahead of it (the bound counts
    # from when it heads its team), so its own team's stream stays within capacity; another
    # team's stream may overload it (its backlog is in another queue)
    assume(not same_team or per_job * work / gap <= 0.9 * 8 * nodes)
    horizon = 8 * HOUR
    stream = [_job(f"s{i:04d}", "a", per_job, gap * i, work, mr=protect) for i in range(int(horizon / gap))]
    submit = draw(st.sampled_from([0.0, 450.0, 2000.0]))
    big = _job("big", "a" if same_team else "b", big_gpus, submit, HOUR, mr=HOUR)
    what = (f"{nodes} nodes; {big_gpus}-GPU job of {big.account} at {submit}; a's stream: {per_job} GPUs every "
            f"{gap} s, {work} s of work, protected {protect} s")
    return [*stream, big], what, submit + STARVING_S + work + EPOCH_AND_PASSES


@settings(max_examples=25, deadline=None)
@given(_streams(), SPARE_GANGS)
def test_no_job_starves_behind_a_stream_whatever_its_size_and_whose_stream_it_is(
    case: tuple[list[JobSpec], str, float], spare_gangs: str,
) -> None:
    jobs, what, bound = case
    res = _run(jobs, nodes=int(what.split()[0]), spare_gangs=spare_gangs)
    assert _start(res, "big") <= bound, what


# -- small clusters: allocations smaller than a node ------------------------------------------


def _run3(jobs: list[JobSpec], *, nodes: int, teams: int = 3, spare_gangs: str = "off") -> SimResult:
    config = make_config({t: 1 for t in "abcdef"[:teams]}, nodes=nodes, policy=Policy(spare_gangs=spare_gangs))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def test_a_team_entitled_to_less_than_a_node_gets_its_whole_node_job_by_fair_share_not_a_natural_end() -> None:
    # two 8-GPU nodes, three teams owed 5.3 GPUs each: a and b each run a 20 h whole-node job,
    # c has used nothing.  Evicting either leaves the summed distance from what is owed equal
    # (2.7 + 5.3 both ways), so c's whole-node job waited 20 h for a natural end.  It is bigger
    # than c's whole entitlement, so an equal distance is enough: it starts at once.
    jobs = [_job("A", "a", 8, 0.0, 20 * HOUR), _job("B", "b", 8, 0.0, 20 * HOUR), _job("C", "c", 8, 1800.0, 4 * HOUR)]
    res = _run3(jobs, nodes=2)
    assert _start(res, "C") <= 1800.0 + 60.0


@st.composite
def _sub_node(draw: st.DrawFn) -> tuple[list[JobSpec], int, int]:
    nodes = draw(st.integers(1, 3))
    teams = draw(st.integers(nodes + 1, nodes + 3))  # every team owed less than a node
    jobs = []
    for k in range(draw(st.integers(3, 10))):
        team = "abcdef"[draw(st.integers(0, teams - 1))]
        gpus = draw(st.sampled_from([4, 6, 8, 8, 16]))
        jobs.append(_job(f"j{k}", team, gpus, draw(st.sampled_from([0.0, 600.0, 3600.0, 7200.0])),
                         draw(st.sampled_from([HOUR, 4 * HOUR, 12 * HOUR])), mr=draw(st.sampled_from([600.0, 1800.0]))))
    return jobs, nodes, teams


@settings(max_examples=30, deadline=None)
@given(_sub_node(), SPARE_GANGS)
def test_no_pair_of_jobs_evicts_each_other_back_and_forth_on_a_cluster_of_sub_node_allocations(
    case: tuple[list[JobSpec], int, int], spare_gangs: str,
) -> None:
    jobs, nodes, teams = case
    res = _run3(jobs, nodes=nodes, teams=teams, spare_gangs=spare_gangs)
    last_evictor: dict[str, str] = {}  # each job's latest evictor (what it carries as evicted_by)
    for e in res.events:
        if e.event == "preempt" and e.by is not None and e.job is not None:
            assert last_evictor.get(e.by) != e.job, f"{e.job} evicted {e.by}, then {e.by} evicted {e.job}"
            last_evictor[e.job] = e.by


def test_a_reservation_passed_to_a_better_ranked_teams_gang_is_released_with_the_reason() -> None:
    # a's gang g holds both nodes from 10 s (a0 and a1 end at 1,000 and 2,000 s).  b has used
    # nothing, so when its gang gb arrives at 500 s b's queue ranks first and gb holds the nodes:
    # g's reservation is dropped, and the log says so (``release``) and why.  A reservation that
    # ends in its job's start is fulfilled, not released; g holds again once gb has started.
    jobs = [
        _job("a0", "a", 8, 0.0, 1000.0, mr=1000.0), _job("a1", "a", 8, 0.0, 2000.0, mr=2000.0),
        _job("g", "a", 16, 10.0, HOUR, mr=HOUR), _job("gb", "b", 16, 500.0, HOUR, mr=HOUR),
    ]
    res = _run(jobs, nodes=2)
    log = [(e.event, e.job, e.reason) for e in res.events if e.event in ("reserve", "release", "start")
           and e.job in ("g", "gb")]
    released = [(job, why) for ev, job, why in log if ev == "release"]
    assert released == [("g", "gb holds the reservation now")]
    kinds = [(ev, job) for ev, job, _ in log]
    assert kinds.index(("reserve", "g")) < kinds.index(("release", "g")) < kinds.index(("reserve", "gb"))
    assert kinds.index(("start", "gb")) < len(kinds) - 1 - kinds[::-1].index(("reserve", "g"))  # holds again
    assert _start(res, "gb") < _start(res, "g")


# -- more than one reservation (issue 25 item 3) -------------------------------------------------


def _two_gangs(reservations: int) -> SimResult:
    # five nodes, all busy with c's protected work: n0-n2 free at 500, 600 and 3,000 s (ga's three
    # nodes), n3-n4 hold 6 of 8 GPUs until 3,100 and 3,200 s.  c streams protected 2-GPU jobs of
    # 2,000 s every 300 s, which fit the two free GPUs of n3 or n4.  Gangs ga (24 GPUs, a) and gb
    # (16 GPUs, b) wait from 10 s.
    jobs = [
        _job("c0", "c", 8, 0.0, 500.0, mr=500.0), _job("c1", "c", 8, 0.0, 600.0, mr=600.0),
        _job("c2", "c", 8, 0.0, 3000.0, mr=3000.0),
        _job("c3", "c", 6, 0.0, 3100.0, mr=3100.0), _job("c4", "c", 6, 0.0, 3200.0, mr=3200.0),
        _job("ga", "a", 24, 10.0, 10 * HOUR, mr=HOUR), _job("gb", "b", 16, 10.0, 10 * HOUR, mr=HOUR),
        *[_job(f"s{i}", "c", 2, 20.0 + 300.0 * i, 2000.0, mr=2000.0) for i in range(60)],
    ]
    config = make_config({"a": 1, "b": 1, "c": 1}, nodes=5, policy=Policy(reservations=reservations))
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def test_a_second_gang_holds_its_own_nodes_while_the_first_waits_so_the_stream_keeps_off_them() -> None:
    # With one reservation gb held nothing until ga started at 3,000 s: meanwhile c's stream kept
    # taking the free GPUs of n3-n4 with jobs running past 3,200 s, and gb started at 4,320 s.
    # With two, gb holds n3-n4 from 10 s (disjoint from ga's), only stream jobs ending by 3,200 s
    # start there, and gb starts when c3 and c4 end.  ga is not delayed.
    one, two = _two_gangs(1), _two_gangs(2)
    assert _start(one, "ga") == _start(two, "ga") == 3000.0
    assert _start(one, "gb") > 4000.0
    assert _start(two, "gb") == 3200.0
    held = [(e.job, e.nodes) for e in two.events if e.event == "reserve" and e.t == 10.0]
    assert held == [("ga", ("n000", "n001", "n002")), ("gb", ("n003", "n004"))]
    # every stream job that started on n3-n4 while gb held them ended by gb's start
    for e in two.events:
        if e.event == "start" and e.job.startswith("s") and e.t < 3200.0 and set(e.nodes or ()) & {"n003", "n004"}:
            assert e.t + 2000.0 <= 3200.0, e
