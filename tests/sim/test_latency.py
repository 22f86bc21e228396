"""The latency profile: a requeued job waits out the backend's eligibility delay before it can
run again, a start lands the launch delay after its pass, passes happen only at cycle
multiples; the ``none`` profile changes nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.core.jobs import JobSpec
from allotment.errors import UsageError
from allotment.sim.latency import NONE, PROFILES, LatencyProfile, parse_profile
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

CONFIG = make_config({"a": 1, "b": 1}, nodes=1)


def _preemption_workload() -> Workload:
    # a's free 8-GPU job fills the node; b's allocated 4-GPU job arrives at 100 and takes GPUs
    free = JobSpec("u", 0.0, "a", 8, 1000.0, "x", min_runtime=0, kind="batch")
    alloc = JobSpec("b1", 100.0, "b", 4, 10.0, "y", min_runtime=600, kind="debug")
    return Workload.of([free, alloc])


def _end(profile: LatencyProfile) -> float:
    m = simulate(CONFIG, _preemption_workload(), latency=profile).metrics  # days: 4 decimals
    assert m["preemptions"] == 1
    return float(m["days"]) * 86400.0


def test_a_requeued_job_runs_again_only_after_the_eligibility_delay() -> None:
    none, delayed = _end(NONE), _end(LatencyProfile("t", requeue_delay_s=300.0))
    # free job: preempted at 100 (100 s of work kept), needs 900 s more
    assert none == pytest.approx(110.0 + 900.0, abs=5)  # back as soon as b1 ends at 110
    assert delayed == pytest.approx(100.0 + 300.0 + 900.0, abs=5)  # eligible only at 400


def _free_end(profile: LatencyProfile, checkpoint_s: float | None) -> float:
    free = JobSpec("u", 0.0, "a", 8, 1000.0, "x", min_runtime=0, kind="batch", checkpoint_interval=checkpoint_s)
    r = simulate(CONFIG, Workload.of([free, _preemption_workload().jobs[1]]), latency=profile, keep_events=True)
    return max(e.t for e in r.events if e.event == "end" and e.job == "u")


def test_a_resumed_job_keeps_only_the_work_it_did_after_its_launch() -> None:
    # u is started by the pass at 0 and works from its launch at 3; preempted at 100, b1 ends
    # at 113, u is started again by the pass at 120 (the policy's cycle) and launches at 123
    launch = LatencyProfile("t", launch_delay_s=3.0)
    # continuous checkpoints: 97 s kept (not the 100 s from the pass), 903 s left
    assert _free_end(launch, None) == pytest.approx(123.0 + 903.0)
    # every 10 s: the checkpoint at 90 s of work (at 93), not the one at 100 s it never did
    assert _free_end(launch, 10.0) == pytest.approx(123.0 + 910.0)
    assert _free_end(NONE, 10.0) == pytest.approx(110.0 + 900.0)  # no launch: all 100 s kept


def test_a_start_lands_the_launch_delay_after_its_pass_which_waits_for_the_cycle() -> None:
    job = JobSpec("j", 3.0, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    m = simulate(CONFIG, Workload.of([job]), latency=LatencyProfile("t", 5.0, 0.0, 1.0)).metrics
    assert m["wait"]["debug"]["p50"] == pytest.approx(2.0 + 1.0)  # pass at 5, start at 6
    base = simulate(CONFIG, Workload.of([job])).metrics
    assert "latency_profile" not in base and m["latency_profile"] == "t"


def test_profiles_parse_with_adjustments_and_bad_ones_say_why() -> None:
    assert parse_profile("none") == NONE
    assert PROFILES["slurm"].requeue_delay_s == 121.0  # cred_expire 120 s + 1
    p = parse_profile("slurm,requeue=11,cycle=5")
    assert (p.requeue_delay_s, p.cycle_s, p.launch_delay_s) == (11.0, 5.0, 1.0)
    with pytest.raises(UsageError, match="unknown profile 'pbs'"):
        parse_profile("pbs")
    with pytest.raises(UsageError, match="KEY=SECONDS"):
        parse_profile("slurm,requeue=-3")


def test_with_time_limits_the_core_plans_with_the_limit_but_jobs_end_after_their_work() -> None:
    p = LatencyProfile("t", limit_margin_s=30.0)
    job = JobSpec("j", 0.0, "a", 1, 45.0, "x", min_runtime=600, kind="debug")
    assert p.as_known(job).work == 120.0 and NONE.as_known(job) is job  # 45 + 30 s -> 2 min
    r = simulate(CONFIG, Workload.of([job]), latency=p, keep_events=True)
    # the run ended after its true work (45 s, 45 GPU-seconds charged), not its 120 s limit
    end = next(e for e in r.events if e.event == "end")
    assert end.t == pytest.approx(45.0) and end.charged_gpu_hours == pytest.approx(45.0 / 3600.0)


@pytest.mark.parametrize("text", ["none", "slurm", "slurm-test", "slurm,requeue=11", "slurm,launch=2.5,cycle=1", "slurm-test,read=0"])
def test_a_profiles_spec_parses_back_to_the_same_profile(text: str) -> None:
    """``allot plan`` prints ``spec()`` in its rerun command: it must give the very same delays."""
    p = parse_profile(text)
    assert parse_profile(p.spec()) == p
    assert p.spec() == ("slurm,cycle=1,launch=2.5" if text.startswith("slurm,launch") else text)


def test_with_a_read_lag_a_pass_sees_an_arrival_before_its_read_and_launches_from_the_grid() -> None:
    """Issue 30 item 2: the reconciler's ``squeue`` read comes ``read`` after the tick's grid
    instant, so a job that arrives in between is started by that tick, not the next one."""
    job = JobSpec("j", 5.4, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    at_grid = LatencyProfile("t", 5.0, 0.0, 1.7)
    at_read = LatencyProfile("t", 5.0, 0.0, 1.7, read_s=0.9)
    # grid passes at 0, 5, 10: the job is seen at 10 and runs from 11.7
    assert simulate(CONFIG, Workload.of([job]), latency=at_grid).metrics["wait"]["debug"]["p50"] == pytest.approx(11.7 - 5.4)
    # passes at the reads 0.9, 5.9: seen at 5.9, runs 1.7 s after its grid instant 5, at 6.7
    assert simulate(CONFIG, Workload.of([job]), latency=at_read).metrics["wait"]["debug"]["p50"] == pytest.approx(6.7 - 5.4)
    late = JobSpec("k", 5.95, "a", 1, 60.0, "x", min_runtime=600, kind="debug")  # after the read
    assert simulate(CONFIG, Workload.of([late]), latency=at_read).metrics["wait"]["debug"]["p50"] == pytest.approx(11.7 - 5.95)
    assert "read_s" not in PROFILES["slurm"].key()  # a profile without it keeps its cache key
    assert PROFILES["slurm-test"].read_s == 0.9  # measured on the test cluster


def test_passes_as_run_sit_at_the_real_reads_late_and_skipped_ones_included() -> None:
    """Issue 30: ``allot replay --compare`` passes where the replay's ticks really read.  A
    job that arrives after a late read is started by the next read that happened (here the
    slot at 5 was skipped), and the launch counts ``launch - read`` from that read."""
    job = JobSpec("j", 5.4, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    nominal = LatencyProfile("t", 5.0, 0.0, 1.7, read_s=0.9)
    as_run = nominal.as_run((0.9, 11.3, 15.9))  # the tick of slot 5 overran into slot 10
    wait = simulate(CONFIG, Workload.of([job]), latency=as_run).metrics["wait"]["debug"]["p50"]
    assert wait == pytest.approx(11.3 + 0.8 - 5.4)
    assert as_run.pass_at(11.3, 5.0) == 11.3 and as_run.pass_at(11.31, 5.0) == 15.9
    assert as_run.pass_at(16.0, 5.0) == pytest.approx(20.9)  # after the last read: the grid
    assert as_run.key()["reads"] == "0.9 11.3 15.9" and "reads" not in nominal.key()


def test_reads_on_the_nominal_grid_simulate_byte_for_byte_as_the_nominal_profile() -> None:
    """The as-run schedule is the nominal one when the ticks ran on time: one pass model."""
    jobs = [
        JobSpec(f"j{i}", 0.3 * i + 0.1 * (i % 4), "ab"[i % 2], 1 + i % 4, 7.0 + 3 * i, "x",
                min_runtime=600 if i % 3 else 0, kind="debug")
        for i in range(30)
    ]
    nominal = LatencyProfile("t", 2.0, 11.0, 1.7, 30.0, read_s=0.9)  # slurm-test at 2 s
    grid = nominal.as_run(tuple(round(2.0 * k + 0.9, 3) for k in range(200)))
    a = simulate(CONFIG, Workload.of(jobs), latency=nominal, keep_events=True).events
    b = simulate(CONFIG, Workload.of(jobs), latency=grid, keep_events=True).events
    assert a == b and a


def test_passes_as_run_never_come_before_the_last_ones_launch() -> None:
    """A read closer than the launch to the pass before it is not a pass: the job the pass
    before started has not launched yet (on the cluster reads are at least 1.3 s apart)."""
    p = LatencyProfile("t", 2.0, 0.0, 1.7, read_s=0.9).as_run((0.9, 1.5, 2.9, 3.7, 4.9))
    assert p.reads == (0.9, 2.9, 3.7, 4.9)


def test_a_start_decided_at_the_clusters_read_launches_when_slurm_launched_it() -> None:
    """Issue 30: with the launches as run, a start the simulator decides at the read the
    cluster decided it launches at the replay's real run start (here 1.7 s after the read, a
    Slurm cycle later than the nominal 0.8 s); a real run only after the next read was decided
    by that read, a tick later, and does not lend its launch: the nominal ``launch - read``."""
    from allotment.sim.latency import RunStart

    job = JobSpec("j", 5.4, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    nominal = LatencyProfile("t", 2.0, 0.0, 1.7, read_s=0.9)
    reads = tuple(round(2.0 * k + 0.9, 3) for k in range(100))
    slow = nominal.as_run(reads, (RunStart("j", 8.6), RunStart("other", 7.0)))
    wait = simulate(CONFIG, Workload.of([job]), latency=slow).metrics["wait"]["debug"]["p50"]
    assert wait == pytest.approx(8.6 - 5.4)
    elsewhere = nominal.as_run(reads, (RunStart("j", 9.5),))  # after the read at 8.9
    wait = simulate(CONFIG, Workload.of([job]), latency=elsewhere).metrics["wait"]["debug"]["p50"]
    assert wait == pytest.approx(6.9 + 0.8 - 5.4)


def test_a_preemption_of_a_run_the_clusters_requeue_found_ended_completes_it() -> None:
    """Issue 30, residual 3: the cluster's core decided a requeue at a read and the run ended
    before the ``scontrol requeue`` landed (``unchanged``), so it completed; the simulator,
    preempting at the pass, requeued it and ran it again.  With the replay's ``ended`` the
    same preemption at the same read completes the run; an end a tick later does not."""
    from allotment.sim.latency import RunEnd

    # u (free, 8 GPUs) launches at 1.7 and would end at 101.2; b1 arrives at 100 and the
    # pass at the read 100.9 preempts u for it
    free = JobSpec("u", 0.0, "a", 8, 99.5, "x", min_runtime=0, kind="batch", checkpoint_interval=2.0)
    alloc = JobSpec("b1", 100.0, "b", 4, 10.0, "y", min_runtime=600, kind="debug")
    nominal = LatencyProfile("t", 2.0, 11.0, 1.7, read_s=0.9)
    reads = tuple(round(2.0 * k + 0.9, 3) for k in range(200))

    def run(ended: tuple[RunEnd, ...]) -> list[tuple[float, str]]:
        r = simulate(CONFIG, Workload.of([free, alloc]), latency=nominal.as_run(reads, (), ended),
                     keep_events=True)
        return [(e.t, e.event) for e in r.events or () if e.job == "u" and e.event in ("start", "preempt", "end")]

    # without: requeued, eligible at 111.9, passed at 112.9, run again for its last 1.5 s
    assert run(()) == [(1.7, "start"), (100.9, "preempt"), (pytest.approx(113.7), "start"),
                       (pytest.approx(113.7 + 1.5), "end")]
    assert run((RunEnd("u", 101.5),)) == [(1.7, "start"), (100.9, "end")]  # sacct's second 101
    assert run((RunEnd("u", 103.5),))[1] == (100.9, "preempt")  # ended after the next read


def test_a_launch_longer_than_the_pass_interval_can_be_preempted_before_it_runs() -> None:
    """A start the backend has not launched yet when the next pass preempts it never ran: no
    preempt is logged (the event log used to raise KeyError on it) and no requeue delay; it
    waits in the queue and starts again later."""
    free = JobSpec("u", 0.0, "a", 8, 50.0, "x", min_runtime=0, kind="batch")
    alloc = JobSpec("b1", 1.0, "b", 4, 10.0, "y", min_runtime=600, kind="debug")
    slow = LatencyProfile("t", 2.0, 11.0, 5.0)  # launch 5 s after a pass, passes every 2 s
    r = simulate(CONFIG, Workload.of([free, alloc]), latency=slow, keep_events=True)
    u = [(e.t, e.event) for e in r.events or () if e.job == "u" and e.event in ("start", "preempt", "end")]
    # b1 runs 7-17 on 4 of the 8 GPUs; u, all its work left, starts at the pass at 18
    assert u == [(pytest.approx(18.0 + 5.0), "start"), (pytest.approx(23.0 + 50.0), "end")]
    assert r.metrics["preemptions"] == 0


def test_a_start_the_cluster_decided_at_this_read_launches_when_slurm_did_however_late() -> None:
    """Issue 30, seed 6: the cluster's core started f034 at the tick reading at 186.9 (the
    audit log) by requeuing f016, and Slurm ran it only at 189.5, after the next read, once the
    requeue's kill had freed the GPUs.  With the deciding tick known the start launches there;
    without it the rule is the read window (a run after the next read is not lent)."""
    from allotment.sim.latency import RunStart

    job = JobSpec("j", 5.4, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    nominal = LatencyProfile("t", 2.0, 0.0, 1.7, read_s=0.9)
    reads = tuple(round(2.0 * k + 0.9, 3) for k in range(100))

    def wait(start: RunStart) -> float:
        m = simulate(CONFIG, Workload.of([job]), latency=nominal.as_run(reads, (start,))).metrics
        return float(m["wait"]["debug"]["p50"])

    assert wait(RunStart("j", 9.5, decided=6.5)) == pytest.approx(9.5 - 5.4)  # tick 6.5, read 6.9
    assert wait(RunStart("j", 9.5)) == pytest.approx(6.9 + 0.8 - 5.4)
    assert wait(RunStart("j", 9.5, decided=8.5)) == pytest.approx(6.9 + 0.8 - 5.4)  # another tick's


@given(
    launch=st.floats(0.0, 30.0), read=st.floats(0.0, 5.0),
    reads=st.lists(st.floats(0.0, 1000.0), max_size=6), now=st.floats(0.0, 1000.0),
)
def test_a_profile_without_launches_as_run_launches_every_start_after_one_delay(
    launch: float, read: float, reads: list[float], now: float
) -> None:
    """The simulator reads ``same_launch()`` once per run in place of ``launch_after`` per
    start: it must answer what ``launch_after`` answers for any job at any pass, reads or not;
    with launches as run, it declines (None)."""
    from allotment.sim.latency import RunStart

    p = LatencyProfile("t", 2.0, 0.0, launch, read_s=read).as_run(tuple(reads))
    assert p.same_launch() is not None
    assert p.launch_after("j", now) == p.same_launch() == p.launch_after("other", now + 1.0)
    assert NONE.same_launch() == NONE.launch_after("j", now) == 0.0
    assert p.as_run(tuple(reads), (RunStart("j", now + 1.0),)).same_launch() is None


def test_a_start_the_clusters_next_tick_placed_again_runs_where_that_tick_put_it() -> None:
    """Docs/fidelity.md, the tenth pass: a start Slurm had not launched by the next read was
    still pending in it, and the cluster's tick decided it again there.  When that update
    found it waiting (audit ``applied``: ``placed``), Slurm ran the second decision; when it
    found the run launched (``unchanged``, seed 11, 2026-12-07), the first.  ``j`` (1 GPU) is
    decided at the read 6.9 onto n001, the exact fit beside ``b`` (7 GPUs); ``b`` ends at 8.0,
    so the read 8.9 finds n001 empty and the best fit is n000 beside ``a`` (6 GPUs)."""
    from allotment.sim.latency import RunStart

    config = make_config({"a": 1, "b": 1}, nodes=2)
    a = JobSpec("a", 0.0, "a", 6, 1000.0, "x", min_runtime=600, kind="train")
    b = JobSpec("b", 0.0, "b", 7, 6.3, "y", min_runtime=600, kind="train")  # launched 1.7, ends 8.0
    j = JobSpec("j", 5.4, "a", 1, 60.0, "x", min_runtime=600, kind="debug")
    nominal = LatencyProfile("t", 2.0, 0.0, 1.7, read_s=0.9)
    reads = tuple(round(2.0 * k + 0.9, 3) for k in range(100))

    def start_of_j(run: RunStart) -> tuple[float, tuple[str, ...]]:
        r = simulate(config, Workload.of([a, b, j]), latency=nominal.as_run(reads, (run,)), keep_events=True)
        (st,) = [e for e in r.events or () if e.job == "j" and e.event == "start"]
        return st.t, tuple(st.nodes or ())

    assert start_of_j(RunStart("j", 9.5, decided=6.5, placed=8.5)) == (9.5, ("n000",))
    assert start_of_j(RunStart("j", 9.5, decided=6.5)) == (9.5, ("n001",))  # the later update: unchanged
    assert start_of_j(RunStart("j", 8.5, decided=6.5)) == (8.5, ("n001",))  # launched before the next read
