"""Issue 25's rules for large jobs, each on a small hand-made scenario run through the simulator:
a reservation binds every start, of any queue and of the holder's own team; age eventually beats
fit inside a team; a starving job of an under-served team of any size gets a reservation."""

from __future__ import annotations

from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec
from allotment.core.starvation import STARVING_S
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, *, mr: float = 600.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u")


def _run(jobs: list[JobSpec], *, nodes: int) -> SimResult:
    config = make_config({"a": 1, "b": 1}, nodes=nodes, policy=Policy())
    return simulate(config, Workload.of(jobs, ()))


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
