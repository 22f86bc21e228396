"""The replay's pure parts: a trace job's sbatch command and requeue-safe script, sacct -D
records and the audit log as events, metrics by the simulator's Recorder, and the fidelity
comparison's targets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from allotment.compile.interactive import InteractiveClass
from allotment.core.jobs import JobSpec
from allotment.reconcile.loop import StopFlag
from allotment.reconcile.replay.collect import events_from_runs, parse_sacct
from allotment.reconcile.replay.compare import compare
from allotment.reconcile.replay.drive import TICK_LAG_S, Replay, aligned_origin, epoch_phase
from allotment.reconcile.replay.events import Event, metrics, read_events, write_events
from allotment.reconcile.replay.submit import submission, tiers


def _job(**kw: object) -> JobSpec:
    base: dict[str, object] = {
        "id": "j1",
        "submit": 60.0,
        "account": "TeamA",
        "gpus": 16,
        "work": 100.0,
    }
    return JobSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_a_job_becomes_sbatch_with_its_tier_shape_and_time_limit(tmp_path: Path) -> None:
    s = submission(
        _job(gpus_per_node=8, min_runtime=120),
        speedup=2,
        gpus_per_node=8,
        default_min_s=600,
        ckpt_dir=tmp_path,
    )
    argv = list(s.argv)
    assert s.at == 30.0 and s.nodes == 2
    assert argv[argv.index("-q") + 1] == "alloc-1m"  # 120 s compressed 2x
    assert argv[argv.index("-A") + 1] == "teama"
    assert argv[argv.index("-N") : argv.index("-N") + 3] == ["-N", "2", "--gres=gpu:8"]
    assert argv[argv.index("-t") + 1] == "2"  # 50 s of work + margin, whole minutes
    free = submission(
        _job(gpus=4, min_runtime=0, resumable=False),
        speedup=1,
        gpus_per_node=8,
        default_min_s=600,
        ckpt_dir=tmp_path,
    )
    assert "unallocated" in free.argv and "--no-requeue" in free.argv and "-N" not in free.argv
    wide = submission(
        _job(gpus=24), speedup=1, gpus_per_node=8, default_min_s=600, ckpt_dir=tmp_path
    )
    assert wide.nodes == 3 and "--gres=gpu:8" in wide.argv  # no per-node shape: whole nodes


def test_tiers_are_every_compressed_minimum_runtime() -> None:
    jobs = (
        _job(min_runtime=30),
        _job(min_runtime=0),
        _job(min_runtime=None),
        _job(min_runtime=300),
    )
    assert tiers(jobs, 120, 1.0) == (30, 120, 300)


def test_the_script_resumes_from_its_checkpoint_after_a_requeue(tmp_path: Path) -> None:
    s = submission(_job(work=3.0), speedup=1, gpus_per_node=8, default_min_s=60, ckpt_dir=tmp_path)
    (tmp_path / "j1.ckpt").write_text("2\n")  # a run before the requeue did 2 of 3 seconds
    script = tmp_path / "j1.sh"
    script.write_text(s.script)
    subprocess.run(["sh", str(script)], check=True, timeout=10)
    assert (tmp_path / "j1.ckpt").read_text().strip() == "3"
    again = submission(
        _job(work=3.0, resumable=False),
        speedup=1,
        gpus_per_node=8,
        default_min_s=60,
        ckpt_dir=tmp_path,
    )
    assert again.script.index("rm -f") < again.script.index("cat ")  # not resumable: from zero


def test_with_a_checkpoint_interval_the_script_writes_only_its_multiples(tmp_path: Path) -> None:
    s = submission(
        _job(work=4.0, checkpoint_interval=2.0),
        speedup=1,
        gpus_per_node=8,
        default_min_s=60,
        ckpt_dir=tmp_path,
    )
    (tmp_path / "j1.ckpt").write_text("1\n")
    script = tmp_path / "j1.sh"
    script.write_text(s.script)
    subprocess.run(["sh", str(script)], check=True, timeout=15)
    # seconds 2, 3 and 4 were worked; only 2 is a checkpoint (4 is the end, nothing to resume)
    assert (tmp_path / "j1.ckpt").read_text().strip() == "2"


SACCT = """70|replay-j1|REQUEUED|1000|1030|billing=8,cpu=1,gres/gpu=8,node=1|n1
70|replay-j1|COMPLETED|1042|1100|billing=8,cpu=1,gres/gpu=8,node=1|n2
71|replay-j2|COMPLETED|1031|1060|billing=16,cpu=2,gres/gpu=16,node=2|n[3-4]
72|replay-j3|PENDING|Unknown|Unknown||None assigned
"""


def test_sacct_runs_and_the_audit_log_become_events() -> None:
    runs = parse_sacct(SACCT)
    assert [(r.job_id, r.state, r.gpus, r.nodes) for r in runs] == [
        ("70", "REQUEUED", 8, 1),
        ("71", "COMPLETED", 16, 2),
        ("70", "COMPLETED", 8, 1),
    ]
    jobs = {"replay-j1": _job(id="j1", gpus=8), "replay-j2": _job(id="j2", account="teamb")}
    audit = [
        {
            "action": "requeue",
            "target": "70",
            "result": "applied",
            "time": 1029.5,
            "rule": "reclaim",
            "reason": "teama runs 8 GPUs over its entitlement",
        },
        {
            "action": "drain",
            "target": "n4",
            "result": "applied",
            "time": 1050.0,
            "rule": "health",
            "reason": "ECC",
        },
    ]
    ev = events_from_runs(
        runs, jobs, audit, t0=1000.0, speedup=1.0, allocated={"j1": True, "j2": False}
    )
    kinds = sorted((e.t, e.event, e.job or e.node) for e in ev)
    assert kinds == [  # sacct's whole seconds are taken as their middle; audit times are exact
        (0.5, "start", "j1"),
        (30.5, "preempt", "j1"),
        (31.5, "start", "j2"),
        (42.5, "start", "j1"),
        (50.0, "drain", "n4"),
        (60.5, "end", "j2"),
        (100.5, "end", "j1"),
    ]
    pre = next(e for e in ev if e.event == "preempt")
    assert (pre.rule, pre.lost_gpu_hours) == ("reclaim", 0.0)
    end = next(e for e in ev if e.event == "end" and e.job == "j1")
    assert end.charged_gpu_hours == round(8 * (30 + 58) / 3600, 6)
    assert next(e for e in ev if e.job == "j2" and e.event == "end").charged_gpu_hours == 0.0


def test_the_event_log_round_trips_and_gives_the_simulators_metrics(tmp_path: Path) -> None:
    ev = [
        Event(0.0, "submit", "a", "teama", 8, 1, True, kind="debug"),
        Event(10.0, "start", "a", "teama", 8, 1, True, kind="debug"),
        Event(110.0, "end", "a", "teama", 8, 1, True, kind="debug"),
    ]
    write_events(tmp_path / "e.jsonl", reversed(ev))
    back = read_events(tmp_path / "e.jsonl")
    assert back == ev
    m = metrics(back, teams=["teama"], capacity=8, entitlement={"teama": 8.0}, node_gpus={"n1": 8})
    assert m["wait"]["debug"]["p50"] == 10.0 and m["jobs"]["completed"] == 1
    assert m["occupancy"] == round(100 / 110, 4)


def test_fidelity_targets_are_met_by_equal_logs_and_missed_by_a_slow_start() -> None:
    sim = [
        Event(0.0, "submit", "a", "teama", 8, 1, True, kind="debug"),
        Event(2.0, "start", "a", "teama", 8, 1, True, kind="debug"),
        Event(302.0, "end", "a", "teama", 8, 1, True, kind="debug"),
    ]
    rows = compare(sim, sim, capacity=8, node_gpus={})
    assert all(r.ok is not False for r in rows)
    slow = [
        sim[0],
        Event(40.0, "start", "a", "teama", 8, 1, True, kind="debug"),
        Event(340.0, "end", "a", "teama", 8, 1, True, kind="debug"),
    ]
    missed = {r.metric for r in compare(slow, sim, capacity=8, node_gpus={}) if r.ok is False}
    assert "wait p50 debug (s)" in missed and "occupancy 0-300s" in missed


def test_a_resize_record_is_not_a_run() -> None:
    """Seed 13, 2026-12-07: an update reached job 46 a moment after Slurm launched it, and
    ``sacct -D`` listed a zero-length RESIZING record beside the run: one start, one end."""
    runs = parse_sacct(
        "46|replay-f046|RESIZING|1647|1647|billing=8,cpu=1,gres/gpu=8,node=1|n4\n"
        "46|replay-f046|COMPLETED|1647|1709|billing=8,cpu=1,gres/gpu=8,node=1|n4\n"
    )
    assert [(r.state, r.start, r.end) for r in runs] == [("COMPLETED", 1647.0, 1709.0)]
    ev = events_from_runs(
        runs, {"replay-f046": _job(gpus=8)}, [], t0=1000.0, speedup=1.0, allocated={"j1": True}
    )
    assert [e.event for e in ev] == ["start", "end"]


def test_a_run_that_ends_in_the_second_it_started_still_pairs_up() -> None:
    runs = parse_sacct(
        "80|replay-j1|REQUEUED|1000|1010|gres/gpu=4,node=1|n1\n"
        "80|replay-j1|COMPLETED|1030|1030|gres/gpu=4,node=1|n1\n"
    )
    ev = events_from_runs(
        runs, {"replay-j1": _job(gpus=4)}, [], t0=1000.0, speedup=1.0, allocated={"j1": False}
    )
    ev.append(Event(0.0, "submit", "j1", "teama", 4, 1, False, kind="batch"))
    m = metrics(ev, teams=["teama"], capacity=8, entitlement={"teama": 8.0}, node_gpus={})
    assert m["jobs"]["completed"] == 1
    assert m["occupancy"] == round(4 * 10.001 / (8 * 30.501), 4)  # nothing left running


def test_the_replay_origin_is_the_next_multiple_of_the_tick_and_its_epoch_phase_is_known() -> None:
    assert aligned_origin(1_000_003.2, 5.0) == 1_000_005.0
    assert aligned_origin(1_000_005.0, 5.0) == 1_000_005.0
    assert epoch_phase(1_000_005.0, 300.0) == 1_000_005.0 % 300 == 105.0
    assert epoch_phase(1_000_005.0, 0.0) == 0.0


def test_replay_ticks_on_the_grid_after_its_origin_and_counts_the_slots_an_overrun_skipped(
    tmp_path: Path,
) -> None:
    """... and keeps what each tick read (the reconciler's ``observation.json``, which every
    tick overwrites) as one line of ``observations.jsonl`` per tick, in order."""
    now = [1000.0]
    starts: list[float] = []
    cost = iter([0.3, 4.6, 0.3, 0.3])  # the second tick overruns two 2 s slots

    class Clocked(StopFlag):
        def wait(self, seconds: float) -> None:
            now[0] += max(0.0, seconds) + 0.01

    stop = Clocked()

    class Ticking:
        state_dir = tmp_path / "reconciler"

        def tick(self) -> None:
            starts.append(now[0])
            self.state_dir.mkdir(exist_ok=True)
            (self.state_dir / "observation.json").write_text(f'{{"at": {now[0]:.2f}}}\n')
            now[0] += next(cost)
            if len(starts) == 4:
                stop.set()

    r = Replay(None, "c", (), (), 1.0, tmp_path, None, Ticking(), interval_s=2.0,  # type: ignore[arg-type]
               clock=lambda: now[0], t0=1004.0)
    r._tick_on_grid(stop)
    assert [round(t - 1004.0 - TICK_LAG_S, 2) for t in starts] == [0.01, 2.01, 8.01, 10.01]
    assert r.late_ticks == 2
    kept = (tmp_path / "observations.jsonl").read_text().splitlines()
    assert kept == [f'{{"at": {t:.2f}}}' for t in starts]


def test_a_replays_waits_per_kind_are_the_policys_kinds() -> None:
    # issue 29: a declared session is "interactive" by the policy's class, a labelled debug job
    # protected for an hour is not debug (it counts as batch), as in the simulator's own metrics
    ev = [
        Event(0.0, "submit", "s", "teama", 2, 1, True, kind="interactive"),
        Event(5.0, "start", "s", "teama", 2, 1, True, kind="interactive"),
        Event(0.0, "submit", "d", "teama", 1, 1, True, kind="debug"),
        Event(7.0, "start", "d", "teama", 1, 1, True, kind="debug"),
    ]
    m = metrics(ev, teams=["teama"], capacity=8, entitlement={"teama": 8.0}, node_gpus={"n1": 8},
                min_runtimes={"s": 7200.0, "d": 3600.0}, interactive=InteractiveClass())
    assert (m["wait"]["interactive"]["n"], m["wait"]["interactive"]["p50"]) == (1, 5.0)
    assert (m["wait"]["debug"]["n"], m["wait"]["batch"]["n"]) == (0, 1)


def test_replay_keeps_each_ticks_decision_read_not_the_checks_after_its_starts() -> None:
    """Issue 30: the backend observes again while it applies a tick's starts; the pass as it
    ran sits at the tick's first read, the one its decisions came from."""
    now = [1000.0]
    reads: list[float] = []

    class Clocked(StopFlag):
        def wait(self, seconds: float) -> None:
            now[0] += max(0.0, seconds) + 0.01

    clocked = Clocked()

    class Ticking:
        state_dir = Path("/nonexistent")  # no observation: nothing kept

        def tick(self) -> None:
            now[0] += 0.4
            reads.append(now[0])  # the decision read
            now[0] += 0.2
            reads.append(now[0])  # apply's check of a start
            if len(reads) >= 6:
                clocked.set()

    r = Replay(None, "c", (), (), 1.0, Path("."), None, Ticking(), interval_s=2.0,  # type: ignore[arg-type]
               clock=lambda: now[0], t0=1004.0, reads_wall=reads)
    r._tick_on_grid(clocked)
    assert len(reads) == 6
    assert [round(t - 1004.0, 2) for t in r.tick_reads] == [0.91, 2.91, 4.91]


def test_a_run_that_a_requeue_found_ended_is_marked_and_the_gate_completes_it() -> None:
    """Issue 30, residual 3: the reconciler decided to requeue j2 at the tick at 1058.5 and its
    ``scontrol requeue`` came after j2 had completed (``unchanged``): the end carries the
    requeue's rule, and the gate's profile (``as_ran``) completes that run where the
    simulator requeues it at the same read.  A requeue that found j1 between its runs (at
    1035, after the first run's end) does not mark j1's later end."""
    from allotment.reconcile.replay.read_times import as_ran
    from allotment.sim.latency import PROFILES, RunEnd

    jobs = {"replay-j1": _job(id="j1", gpus=8), "replay-j2": _job(id="j2", account="teamb")}
    unchanged = {"action": "requeue", "result": "unchanged", "rule": "reservation", "reason": "r"}
    audit = [{**unchanged, "target": "71", "time": 1058.5}, {**unchanged, "target": "70", "time": 1035.0}]
    ev = events_from_runs(parse_sacct(SACCT), jobs, audit, t0=1000.0, speedup=1.0,
                          allocated={"j1": True, "j2": False})
    ends = {e.job: e for e in ev if e.event == "end"}
    assert (ends["j2"].rule, ends["j2"].reason) == ("reservation", "COMPLETED before its requeue landed")
    assert ends["j1"].rule is None and ends["j1"].reason == "COMPLETED"
    gate = as_ran(PROFILES["slurm-test"], (56.9, 58.9, 60.9), ev)
    assert gate.ended == (RunEnd("j2", 60.5),)
    assert gate.ended_first("j2", 58.9) and not gate.ended_first("j2", 56.9)


def test_a_run_is_placed_at_its_scripts_own_start_and_end_within_sacct_s_seconds(tmp_path: Path) -> None:
    """Issue 30: sacct's whole seconds left a run's end on either side of a tick's read in the
    same second (seed 3: f024 ended at 216.5 by sacct's middle, after the read at 216.9 on the
    cluster), and the cores parted there.  The script writes its own start and end (ms); the
    events take them where they fall within sacct's second, sacct's middle otherwise."""
    import time

    from allotment.reconcile.replay.collect import script_times

    s = submission(_job(work=2.0), speedup=1, gpus_per_node=8, default_min_s=60, ckpt_dir=tmp_path)
    (tmp_path / "j1.sh").write_text(s.script)
    before = time.time()
    subprocess.run(["sh", str(tmp_path / "j1.sh")], check=True, timeout=10)
    own = script_times((tmp_path / "j1.times").read_text() + "sta")  # a line cut by a kill
    assert [x.kind for x in own] == ["start", "beat", "beat", "end"] and before <= own[0].at
    assert own[-1].at - own[0].at == pytest.approx(2.0, abs=0.3)
    # sacct: j2 ran from second 1031 to second 1060; its script from 1031.93 to 1060.97
    mine = {"j2": script_times("start 1031.93\nend 1060.97\n")}
    jobs = {"replay-j1": _job(id="j1", gpus=8), "replay-j2": _job(id="j2", account="teamb")}
    ev = events_from_runs(parse_sacct(SACCT), jobs, [], t0=1000.0, speedup=1.0,
                          allocated={"j1": True, "j2": False}, script_times=mine)
    assert sorted((e.t, e.event) for e in ev if e.job == "j2") == [(31.93, "start"), (60.97, "end")]
    assert sorted((e.t, e.event) for e in ev if e.job == "j1")[0] == (0.5, "start")  # none: sacct's


def test_each_start_carries_the_tick_that_decided_it(tmp_path: Path) -> None:
    """The audit log's applied ``start`` decision of a job, at most 10 s before its run's
    start, is written on the start (``decided``, trace seconds), and read back."""
    jobs = {"replay-j1": _job(id="j1", gpus=8), "replay-j2": _job(id="j2", account="teamb")}
    start = {"action": "set_priority", "rule": "start", "result": "applied", "reason": "fits"}
    audit = [{**start, "target": "70", "time": 1000.5}, {**start, "target": "70", "time": 1040.5},
             {**start, "target": "71", "time": 1010.0}]  # 21 s before j2's run: not its decision
    ev = events_from_runs(parse_sacct(SACCT), jobs, audit, t0=1000.0, speedup=1.0,
                          allocated={"j1": True, "j2": False})
    assert sorted((e.t, e.job, e.decided) for e in ev if e.event == "start") == [
        (0.5, "j1", 0.5), (31.5, "j2", None), (42.5, "j1", 40.5)]
    write_events(tmp_path / "real.jsonl", ev)
    assert sorted(e.decided for e in read_events(tmp_path / "real.jsonl") if e.decided) == [0.5, 40.5]


def test_a_start_decided_again_before_slurm_launched_it_carries_the_first_and_the_landed_decision(
    tmp_path: Path,
) -> None:
    """A tick re-decides a start Slurm has not launched yet (seed 11 of 2026-12-06: the tick
    that resumed n4 decided f023 on it, Slurm launched it only after the next tick's read):
    ``decided`` is the first decision, where the gate's simulation decides it and launches
    it when Slurm did; the core ordering the job in between (rule ``order``: not starting it)
    breaks the run.  The run is the last decision whose update found the job waiting
    (``applied``), carried as ``placed`` when it is a later tick's; an update that found the
    run launched (``unchanged``, seed 11 of 2026-12-07: f016) placed nothing."""
    jobs = {"replay-j1": _job(id="j1", gpus=8), "replay-j2": _job(id="j2", account="teamb")}
    start = {"action": "set_priority", "rule": "start", "result": "applied", "reason": "fits"}
    order = {**start, "rule": "order", "reason": "rank"}

    def starts(j2: list[dict[str, object]]) -> list[tuple[float, str, float | None, float | None]]:
        audit = [{**start, "target": "70", "time": 1000.5},
                 {**start, "target": "70", "time": 1036.5}, {**order, "target": "70", "time": 1038.5},
                 {**start, "target": "70", "time": 1040.5},  # j1's second run: ordered between
                 *j2]
        ev = events_from_runs(parse_sacct(SACCT), jobs, audit, t0=1000.0, speedup=1.0,
                              allocated={"j1": True, "j2": False})
        write_events(tmp_path / "real.jsonl", ev)
        back = read_events(tmp_path / "real.jsonl")
        return sorted((e.t, e.job or "", e.decided, e.placed) for e in back if e.event == "start")

    # j2: three ticks decided it; the second update landed, the third found it running
    assert starts([{**start, "target": "71", "time": 1026.5}, {**start, "target": "71", "time": 1028.5},
                   {**start, "target": "71", "time": 1030.5, "result": "unchanged"}]) == [
        (0.5, "j1", 0.5, None), (31.5, "j2", 26.5, 28.5), (42.5, "j1", 40.5, None)]
    # f016: the second update found the run launched: the run is the first decision's
    assert starts([{**start, "target": "71", "time": 1028.5},
                   {**start, "target": "71", "time": 1030.5, "result": "unchanged"}])[1] == (31.5, "j2", 28.5, None)
