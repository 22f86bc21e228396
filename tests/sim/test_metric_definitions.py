"""One test per definition of docs/metrics.md, each on a trace small enough to work out by hand.

Unless noted: teams a and b at 50/50 on one 8-GPU node (each entitled to 4 GPUs), passes every
10 s (the policy default), the numbers in each docstring computed by hand."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.compile.model import Policy
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(jid: str, submit: float, account: str, gpus: int, work: float, min_runtime: float, **kw: object) -> JobSpec:
    return JobSpec(id=jid, submit=submit, account=account, gpus=gpus, work=work, min_runtime=min_runtime, **kw)  # type: ignore[arg-type]


def test_delivered_is_capped_hour_by_hour_so_borrowing_cannot_hide_a_shortfall() -> None:
    """b fills the node at t=0 with eight 1-GPU jobs protected for 2 h (they end at 7200); a's
    8-GPU job arrives at t=1, waits, then runs 7200-10800 alone.  Horizon 3 h.

    a: owed min(4, demand 8) = 4 GPU-h in each of the 3 hours = 12; ran 0, 0, 8 -> delivered
    capped min(8, 4) = 4: ratio 4/12 = 0.3333, received 8/12 = 0.6667.
    b: owed 4 + 4 + 0 (no demand in hour 2) = 8; ran 8 + 8 = 16: delivered 8, ratio 1.0,
    received 2.0.  Cluster: delivered/owed (4 + 8)/(12 + 8) = 0.6, received 24/20 = 1.2 (a
    per-team cap of the totals would have said (8 + 8)/20 = 0.8)."""
    config = make_config({"a": 1, "b": 1}, nodes=1)
    jobs = [_job(f"b{i}", 0.0, "b", 1, 7200.0, 7200.0) for i in range(8)] + [_job("a0", 1.0, "a", 8, 3600.0, 600.0)]
    m = simulate(config, Workload.of(jobs), days=3 / 24).metrics
    a, b = m["teams"]["a"], m["teams"]["b"]
    assert (a["owed"], a["delivered"], a["received_gpu_hours"]) == (12.0, 4.0, 8.0)
    assert (a["ratio"], a["received"]) == (0.3333, 0.6667)
    assert (b["owed"], b["delivered"], b["received_gpu_hours"], b["ratio"], b["received"]) == (8.0, 8.0, 16.0, 1.0, 2.0)
    assert (m["owed_gpu_hours"], m["delivered_gpu_hours"], m["received_gpu_hours"]) == (20.0, 12.0, 24.0)
    assert (m["delivered_over_owed"], m["received"]) == (0.6, 1.2)
    assert (m["teams_at_or_above_95"], m["teams_below_90"], m["teams_min_ratio"]) == (1, 1, 0.3333)


def test_owed_follows_the_in_service_fraction_and_the_demand() -> None:
    """One team entitled to all 16 GPUs of two nodes; node n2 is unhealthy (and empty) for the
    first hour; one 8-GPU job runs the whole 2 h.

    Hour 0: allocation 16 x 8/16 = 8, demand 8 -> owed 8; hour 1: allocation 16, demand 8 -> owed 8.
    Owed 16, delivered 16, ratio 1.0.  In-service GPU time 8 x 1 h + 16 x 1 h = 24 GPU-h, assigned
    16 GPU-h: occupancy 0.6667.  One drain, empty at once (0 s)."""
    config = make_config({"a": 1}, nodes=2)
    node = config.clusters["c1"].node_names[1]
    w = Workload.of([_job("j", 0.0, "a", 8, 2 * HOUR, 600.0)], [NodeEvent(0.0, node, "unhealthy"), NodeEvent(HOUR, node, "healthy")])
    m = simulate(config, w, days=2 / 24).metrics
    assert (m["teams"]["a"]["owed"], m["teams"]["a"]["delivered"], m["teams"]["a"]["ratio"]) == (16.0, 16.0, 1.0)
    assert m["occupancy"] == 0.6667 and m["allocated_fraction"] == 0.6667 and m["unallocated_fraction"] == 0.0
    assert m["drains"] == 1 and m["drain_seconds"]["max"] == 0.0


def test_waits_count_the_first_start_and_every_wait_after_a_requeue() -> None:
    """Two 8-GPU nodes.  a's job A (8 GPUs, checkpoints every 600 s) starts at 0 on n000; b's job
    C (8 GPUs, 1990 s) arrives at 1 and starts at the next pass, 10, on n000's neighbour n001.
    n000 fails at 1000: A is drained (past its 600 s minimum; 400 s since its last checkpoint x 8
    GPUs = 0.8889 GPU-h lost), requeued, and restarts when C ends at 2000.  Horizon 1 h.

    First-start waits: A 0, C 9 -> p50 0, p90 9.  Total pending: A 0 + 1000, C 9 -> p50 9,
    p90 1000.  In service: 16 x 3600 - 8 x 2600 (n000 empty from 1000) = 36,800 GPU-s; assigned
    8 x 1000 + 8 x 1990 + 8 x 1600 = 36,720: occupancy 0.9978.  n000 emptied at once: one drain
    of 0 s."""
    config = make_config({"a": 1, "b": 1}, nodes=2)
    jobs = [
        _job("A", 0.0, "a", 8, 20000.0, 600.0, checkpoint_interval=600.0),
        _job("C", 1.0, "b", 8, 1990.0, 1990.0),  # protected for its whole run: A may not time-slice it
    ]
    m = simulate(config, Workload.of(jobs, [NodeEvent(1000.0, "n000", "unhealthy")]), days=1 / 24).metrics
    assert m["wait"]["all"] == {"p50": 0.0, "p90": 9.0, "n": 2}
    assert m["pending"]["all"] == {"p50": 9.0, "p90": 1000.0, "n": 2}
    assert m["teams"]["a"]["pending"]["p50"] == 1000.0 and m["teams"]["a"]["wait"]["p50"] == 0.0
    assert m["preemptions_by_rule"] == {"drain": 1} and m["lost_gpu_hours"] == 0.8889
    assert m["occupancy"] == 0.9978
    assert m["drains"] == 1 and m["drain_seconds"] == {"p50": 0.0, "p90": 0.0, "max": 0.0}


def test_a_job_held_by_a_dependency_waits_from_when_it_becomes_eligible() -> None:
    """D1 (8 GPUs, 1000 s) runs at 0; D2 (1 GPU, depends on D1) is submitted at 10 and starts
    when D1 ends at 1000: its wait is 0 s, not 990 s.  Demand: 8 GPUs for 1000 s, then 1 GPU
    for 60 s, over a 1-hour window of 8 GPUs: (8000 + 60) / 28800 = 0.2799."""
    config = make_config({"a": 1}, nodes=1)
    jobs = [_job("D1", 0.0, "a", 8, 1000.0, 600.0), _job("D2", 10.0, "a", 1, 60.0, 60.0, depends_on=("D1",))]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    assert m["wait"]["all"] == {"p50": 0.0, "p90": 0.0, "n": 2}
    assert m["demand_ratio"] == 0.2799


def test_a_rejected_job_is_counted_apart_and_never_as_a_wait() -> None:
    """BIG (16 GPUs) can never fit one 8-GPU node: rejected at submission, so it is in
    ``jobs.rejected`` and in no wait statistic -- not a wait censored at the run's end (1 h).
    D1 starts at once: every wait is 0 s, over one job.  (On this 8-GPU cluster both are "large",
    half the cluster or more: only D1 counts.)"""
    config = make_config({"a": 1}, nodes=1)
    jobs = [_job("BIG", 0.0, "a", 16, 1000.0, 600.0), _job("D1", 0.0, "a", 8, 1000.0, 600.0)]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    assert m["jobs"]["rejected"] == 1
    assert m["wait"]["all"] == {"p50": 0.0, "p90": 0.0, "n": 1}
    assert m["wait"]["large"] == {"p50": 0.0, "p90": 0.0, "n": 1}


def test_debug_jobs_are_counted_by_the_policy_not_by_the_kind_label() -> None:
    """debug_threshold 15 min.  Debug: "t" (kind train, 5 min minimum, 2 GPUs).  Not debug:
    "d1" (kind debug, 1 h minimum), "d2" (kind debug, 5 min but 16 GPUs: more than a node),
    "u" (kind debug, minimum 0: unallocated).  The node pair is free, so wait.debug has n = 1."""
    config = make_config({"a": 1}, nodes=2, policy=Policy(debug_threshold_s=900))
    jobs = [
        _job("t", 0.0, "a", 2, 300.0, 300.0, kind="train"),
        _job("d1", 0.0, "a", 1, 300.0, 3600.0, kind="debug"),
        _job("d2", 0.0, "a", 16, 300.0, 300.0, kind="debug", gpus_per_node=8),
        _job("u", 0.0, "a", 1, 300.0, 0.0, kind="debug"),
    ]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    assert m["wait"]["debug"]["n"] == 1 and m["wait"]["all"]["n"] == 4


def test_a_maintenance_window_over_before_t0_is_not_a_drain(repo_root: Path) -> None:
    """The bundled h100 cluster has two windows: h100-n077 on 2026-12-02 09:00-17:00 and
    h100-n[001-008] on 2026-12-08 14:00 - 12-09 02:00.  From t0 = 2026-12-05 for 4 days only the
    second falls in the run: 8 drains (the first window used to count, at negative times)."""
    config = compile_repo(repo_root, dt.date(2026, 12, 5))
    w = Workload.of([_job("x", 0.0, "tulu", 1, 60.0, 60.0)])
    m = simulate(config, w, days=4).metrics
    assert m["drains"] == 8
    m0 = simulate(compile_repo(repo_root, dt.date(2026, 11, 30)), w, days=4).metrics
    assert m0["drains"] == 1  # from Monday 2026-11-30 only n077's window (Dec 2) is inside 4 days


def test_a_teams_unallocated_work_is_neither_owed_nor_delivered() -> None:
    """a runs a 2-GPU allocated job (minimum 600 s) and a 4-GPU unallocated one (minimum 0), both
    for the whole hour; b has nothing.  a is entitled to 4 GPUs.

    Owed: min(4, budgeted demand 2) = 2 GPU-h; ran (budgeted) 2: delivered 2, ratio 1.0.  The
    unallocated job is neither demand (it asked not to be charged) nor delivered: counted, it
    would make a look served by free work it may lose at any moment.  Occupancy (2 + 4)/8 = 0.75,
    of which unallocated 4/8 = 0.5."""
    config = make_config({"a": 1, "b": 1}, nodes=1)
    jobs = [_job("al", 0.0, "a", 2, HOUR, 600.0), _job("free", 0.0, "a", 4, HOUR, 0.0)]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    a = m["teams"]["a"]
    assert (a["owed"], a["delivered"], a["received_gpu_hours"], a["ratio"]) == (2.0, 2.0, 2.0, 1.0)
    assert m["teams"]["b"]["owed"] == 0.0
    assert (m["occupancy"], m["unallocated_fraction"]) == (0.75, 0.5)


def test_a_job_held_by_a_dependency_is_not_owed_until_it_becomes_eligible() -> None:
    """a (entitled to 4 GPUs): D1 (1 GPU, 1800 s) runs 0-1800; D2 (4 GPUs, 1800 s, depends on D1)
    is submitted at 0 and runs 1800-3600.  Horizon 1 h.

    Demand: 1 GPU for 1800 s, then 4 GPUs for 1800 s = 2.5 GPU-h, under the 4 GPU-h allocation:
    owed 2.5, ran 2.5, ratio 1.0.  Counting D2 while it waits on D1 would give owed min(4, 4.5)
    = 4 and ratio 0.625 for work that could not run."""
    config = make_config({"a": 1, "b": 1}, nodes=1)
    jobs = [_job("D1", 0.0, "a", 1, 1800.0, 600.0), _job("D2", 0.0, "a", 4, 1800.0, 600.0, depends_on=("D1",))]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    a = m["teams"]["a"]
    assert (a["owed"], a["delivered"], a["ratio"]) == (2.5, 2.5, 1.0)


def test_a_large_job_is_64_gpus_or_half_a_smaller_cluster() -> None:
    """On 4 nodes (32 GPUs) a 16-GPU job is half the cluster: large.  An 8-GPU job is not.  On a
    cluster of 64 GPUs or more the bound stays 64 (issue 25: on the 88-GPU b200 the class was
    always empty)."""
    config = make_config({"a": 1, "b": 1}, nodes=4)
    jobs = [_job("big", 0.0, "a", 16, 600.0, 600.0), _job("small", 0.0, "b", 8, 600.0, 600.0)]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    assert m["wait"]["large"]["n"] == 1 and m["wait"]["all"]["n"] == 2
    config = make_config({"a": 1, "b": 1}, nodes=16)
    jobs = [_job("big", 0.0, "a", 64, 600.0, 600.0), _job("mid", 0.0, "b", 48, 600.0, 600.0)]
    m = simulate(config, Workload.of(jobs), days=1 / 24).metrics
    assert m["wait"]["large"]["n"] == 1
