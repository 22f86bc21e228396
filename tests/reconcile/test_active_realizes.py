"""Active mode carries out the core's whole decision on a Slurm-like observation: its starts
become the highest priorities, only priorities that break the wanted order are rewritten, the
core learns each job's real shape and time limit, and a requeued job that is not yet eligible
is left out of the pass without losing its age."""

from __future__ import annotations

from dataclasses import replace

from allotment.backends.policy import qos_tiers
from allotment.backends.protocol import JobObs, NodeObs, Observation
from allotment.compile.model import Policy
from allotment.reconcile.active import EpochUsage, plan_cluster, snapshot
from allotment.reconcile.pinned_order import PINNED_FLOOR, PRIORITY_TOP, START_FLOOR
from tests.backends.configs import tree_config
from tests.reconcile.conftest import T0

CONFIG = tree_config()
NODES = tuple(NodeObs(f"n{i}", 8, 0) for i in range(1, 5))


def running(jid: str, acct: str, node: str, gpus: int = 8, mr: int = 20) -> JobObs:
    return JobObs(jid, "root", acct, "q", gpus, "running", T0 - 100, T0 - 50, mr, True, 0, (node,))


def pending(jid: str, acct: str, gpus: int, prio: int = 90_000, **kw: object) -> JobObs:
    return replace(
        JobObs(jid, "root", acct, "q", gpus, "pending", T0 - 30, None, 20, True, prio), **kw
    )


def observe(*jobs: JobObs, used: dict[str, int] | None = None) -> Observation:
    u = used or {}
    nodes = tuple(replace(n, gpus_used=u.get(n.name, 0)) for n in NODES)
    return Observation(T0, nodes, tuple(sorted(jobs, key=lambda j: (len(j.id), j.id))))


def applied(obs: Observation, actions: object) -> Observation:
    """The observation after Slurm took every set_priority."""
    new = {a.target: a.value for a in actions if a.kind == "set_priority"}  # type: ignore[attr-defined]
    jobs = tuple(replace(j, priority=new.get(j.id, j.priority)) for j in obs.jobs)
    return replace(obs, jobs=jobs)


def _prio(plan: object) -> dict[str, int]:
    return {a.target: a.value for a in plan.actions if a.kind == "set_priority"}  # type: ignore[attr-defined]


def test_a_debug_job_that_fits_free_gpus_goes_above_a_blocked_big_job() -> None:
    # n1-n3 full; a 16-GPU job (ranked first, cannot fit) and a 1-GPU job that fits n4 and
    # ends (its time limit) long before the big job's reservation
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 4)]
    big = pending("1", "teama1", 16, gpus_per_node=8)
    small = pending("2", "teama2", 1, time_limit_s=60.0)
    obs = observe(*jobs, big, small, used={"n1": 8, "n2": 8, "n3": 8})
    plan = plan_cluster(obs, CONFIG, "gpulab", {}, {})
    assert [s.job_id for s in plan.decisions.starts] == ["2"]
    prio = _prio(plan)
    assert prio["2"] > prio.get("1", 0) > PINNED_FLOOR  # Slurm starts the start first
    assert {a.rule for a in plan.actions if a.target == "2"} == {"start"}


def test_the_same_state_a_tick_later_sets_no_priority() -> None:
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    waiting = [pending(str(i), ("teama1", "teama2", "teamb")[i % 3], 8) for i in range(1, 9)]
    obs = observe(*jobs, *waiting, used={f"n{i}": 8 for i in range(1, 5)})
    first = plan_cluster(obs, CONFIG, "gpulab", {}, {})
    assert len(_prio(first)) == 8
    again = plan_cluster(applied(obs, first.actions), CONFIG, "gpulab", {}, {})
    assert _prio(again) == {}


def test_when_the_head_leaves_the_queue_the_others_keep_their_priorities() -> None:
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    waiting = [pending(str(i), "teama1", 8) for i in range(1, 9)]
    obs = applied(
        o := observe(*jobs, *waiting, used={f"n{i}": 8 for i in range(1, 5)}),
        plan_cluster(o, CONFIG, "gpulab", {}, {}).actions,
    )
    head = plan_cluster(obs, CONFIG, "gpulab", {}, {}).decisions.order[0].job_id
    rest = replace(obs, jobs=tuple(j for j in obs.jobs if j.id != head))
    assert _prio(plan_cluster(rest, CONFIG, "gpulab", {}, {})) == {}


def test_a_pinned_job_that_is_not_eligible_yet_is_parked_below_the_ranked_jobs() -> None:
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    requeued = pending("1", "teama1", 8, prio=PRIORITY_TOP, eligible=T0 + 9, restarts=1)
    other = pending("2", "teama1", 8)
    obs = observe(*jobs, requeued, other, used={f"n{i}": 8 for i in range(1, 5)})
    snap = snapshot(obs, CONFIG, "gpulab", {}, {})
    assert [p.spec.id for p in snap.pending] == ["2"]
    prio = _prio(plan_cluster(obs, CONFIG, "gpulab", {}, {}))
    assert prio["1"] == PINNED_FLOOR < prio["2"]


def test_a_requeued_job_keeps_its_age_from_submission() -> None:
    back = pending("1", "teama1", 8, eligible=T0 - 5, restarts=1)
    fresh = pending("2", "teama1", 8, eligible=T0 - 20)
    snap = snapshot(observe(back, fresh), CONFIG, "gpulab", {}, {})
    ages = {p.spec.id: p.eligible for p in snap.pending}
    assert ages == {"1": back.submit, "2": T0 - 20}


def test_a_requeued_job_ages_from_its_first_submission_which_slurm_forgot() -> None:
    """Slurm resets ``submit_time`` at a requeue; with the submission the reconciler saw
    before, the requeued job keeps its place ahead of a younger job of the same rank, as the
    simulator keeps it."""
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 4)]
    back = pending("1", "teama1", 8, eligible=T0 - 5, restarts=1, submit=T0 - 16)  # requeued
    young = pending("2", "teama1", 8, submit=T0 - 40)  # submitted after "1" first was
    obs = observe(*jobs, back, young, used={f"n{i}": 8 for i in range(1, 4)})
    forgot = plan_cluster(obs, CONFIG, "gpulab", {}, {})
    assert [s.job_id for s in forgot.decisions.starts] == ["2"]  # what Slurm's clock alone gives
    kept = plan_cluster(obs, CONFIG, "gpulab", {}, {}, submitted={"1": T0 - 100})
    assert [s.job_id for s in kept.decisions.starts] == ["1"]
    snap = snapshot(obs, CONFIG, "gpulab", {}, {}, submitted={"1": T0 - 100, "2": T0 - 40})
    assert {p.spec.id: p.eligible for p in snap.pending} == {"1": T0 - 100, "2": T0 - 40}


def test_held_and_dependent_jobs_are_not_in_the_pass() -> None:
    held = pending("1", "teama1", 1, prio=0)
    dep = pending("2", "teama1", 1, reason="Dependency")
    ok = pending("3", "teama1", 1, reason="Priority")
    snap = snapshot(observe(held, dep, ok), CONFIG, "gpulab", {}, {})
    assert [p.spec.id for p in snap.pending] == ["3"]


def test_the_core_is_told_each_jobs_time_limit_shape_and_placement() -> None:
    multi = replace(
        running("1", "teama1", "n1", gpus=12),
        nodes=("n1", "n2"),
        node_gpus=(8, 4),
        time_limit_s=600.0,
    )
    wide = pending("2", "teama2", 16, gpus_per_node=8, time_limit_s=1800.0)
    unlimited = pending("3", "teamb", 1)
    snap = snapshot(observe(multi, wide, unlimited), CONFIG, "gpulab", {}, {})
    (r,) = snap.running
    assert r.placement == (("n1", 8), ("n2", 4)) and r.spec.work == 600.0
    p = {x.spec.id: x.spec for x in snap.pending}
    assert (p["2"].gpus, p["2"].gpus_per_node, p["2"].work) == (16, 8, 1800.0)
    assert p["3"].work == 86_400.0  # no time limit: the documented fallback


def test_in_active_mode_the_tiers_preempt_nothing_by_themselves() -> None:
    assert all(q.preempt == () for q in qos_tiers((20, 600), backend_preempts=False))
    assert {q.preempt for q in qos_tiers((20, 600)) if q.name != "unallocated"} == {
        ("unallocated",)
    }


def test_a_start_is_pinned_to_the_core_placement_and_releases_the_hold() -> None:
    # best fit: the 2-GPU job goes on n3, the node with exactly 2 GPUs free
    jobs = [running("100", "teamb", "n3", gpus=6)]
    small = pending("1", "teama1", 2, time_limit_s=60.0)
    plan = plan_cluster(observe(*jobs, small, used={"n3": 6}), CONFIG, "gpulab", {}, {})
    (start,) = [a for a in plan.actions if a.target == "1"]
    assert (start.rule, start.nodes, start.release) == ("start", ("n3",), True)
    assert start.value > START_FLOOR


def test_a_pending_start_is_sent_again_with_its_pin_on_the_next_tick() -> None:
    jobs = [running("100", "teamb", "n3", gpus=6)]
    obs = observe(*jobs, pending("1", "teama1", 2, time_limit_s=60.0), used={"n3": 6})
    again = plan_cluster(
        applied(obs, plan_cluster(obs, CONFIG, "gpulab", {}, {}).actions), CONFIG, "gpulab", {}, {}
    )
    assert [(a.target, a.nodes) for a in again.actions] == [("1", ("n3",))]


def test_a_job_leaving_the_start_band_is_unpinned_and_held_again() -> None:
    # it was started (released, pinned, start band) but Slurm did not run it; now the cluster
    # is full: Slurm must not start it on its own when GPUs free up between two ticks
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    was_start = pending("1", "teama1", 8, prio=PRIORITY_TOP)
    obs = observe(*jobs, was_start, used={f"n{i}": 8 for i in range(1, 5)})
    (a,) = plan_cluster(obs, CONFIG, "gpulab", {}, {}).actions
    assert (a.rule, a.nodes, a.release, a.hold_eligible) == ("order", (), False, was_start.submit)
    assert PINNED_FLOOR < a.value <= START_FLOOR


def test_a_waiting_job_is_ordered_but_not_released() -> None:
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    obs = observe(*jobs, pending("1", "teama1", 8), used={f"n{i}": 8 for i in range(1, 5)})
    (a,) = plan_cluster(obs, CONFIG, "gpulab", {}, {}).actions
    assert (a.rule, a.nodes, a.release, a.hold_eligible) == ("order", None, False, None)


def test_a_requeued_job_is_parked_and_held_keeping_its_requeue_delay() -> None:
    jobs = [running(str(100 + i), "teamb", f"n{i}") for i in range(1, 5)]
    requeued = pending("1", "teama1", 8, prio=PRIORITY_TOP, eligible=T0 + 9, restarts=1)
    obs = observe(*jobs, requeued, used={f"n{i}": 8 for i in range(1, 5)})
    (a,) = plan_cluster(obs, CONFIG, "gpulab", {}, {}).actions
    assert (a.value, a.nodes, a.release, a.hold_eligible) == (PINNED_FLOOR, (), False, T0 + 9)


def test_usage_is_read_once_per_fair_share_epoch() -> None:
    reads: list[float] = []

    def read(at: float) -> dict[str, float]:
        reads.append(at)
        return {"teama1": at}

    u = EpochUsage()
    assert u.at(600.0, 300, lambda: read(600.0)) == {"teama1": 600.0}
    assert u.at(895.0, 300, lambda: read(895.0)) == {"teama1": 600.0}  # same epoch: frozen
    assert u.at(900.0, 300, lambda: read(900.0)) == {"teama1": 900.0}
    assert u.at(901.0, 0, lambda: read(901.0)) == {"teama1": 901.0}  # no period: every tick
    assert reads == [600.0, 900.0, 901.0]


def test_a_zero_minimum_runtime_job_is_cancelled_when_the_policy_has_no_unallocated_work() -> None:
    """``unallocated: false`` holds on a live cluster as in the simulator: the core refuses the
    job (core.contract.refusal, decided in decide()), never starts or ranks it, and active mode
    cancels it; with unallocated work on, the same job simply runs free."""
    free = pending("1", "teama1", 1, min_runtime_s=0)
    obs = observe(free)
    off = tree_config(policy=Policy(unallocated_enabled=False))
    plan = plan_cluster(obs, off, "gpulab", {}, {})
    assert [r.job_id for r in plan.decisions.refusals] == ["1"]
    assert "unallocated" in plan.decisions.refusals[0].reason
    assert plan.decisions.starts == () and all(r.job_id != "1" for r in plan.decisions.order)
    cancels = [a for a in plan.actions if a.kind == "cancel"]
    assert [(a.target, a.rule) for a in cancels] == [("1", "refused")]

    on = plan_cluster(obs, CONFIG, "gpulab", {}, {})
    assert on.decisions.refusals == () and [s.job_id for s in on.decisions.starts] == ["1"]
    assert not on.decisions.starts[0].allocated


def test_a_debug_job_the_core_started_as_yielding_backfill_keeps_yielding_on_later_ticks() -> None:
    # the core's flag (Start.yields) is not in Slurm: the reconciler hands it back, and a
    # snapshot marks that running job, so every later decide() may evict it for the reservation
    obs = observe(running("7", "teamb", "n1", gpus=4), running("8", "teamb", "n2", gpus=4), used={"n1": 4, "n2": 4})
    snap = snapshot(obs, CONFIG, "gpulab", {}, {}, yields={"7"})
    assert {r.spec.id: r.yields_to_reservation for r in snap.running} == {"7": True, "8": False}
