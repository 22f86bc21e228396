"""Issue 26: flags corrected for the number of teams (Holm), demand independent of the shares
under test, a warm-up left out of every number, and the plan's units equal to the compiler's."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest

from allotment.compile.render import to_dict
from allotment.core.jobs import JobSpec
from allotment.plan.holm import holm, holm_in_families
from allotment.plan.impact_stats import WEEK_HOURS, summarize
from allotment.plan.impact_units import Setup, Task, Unit, for_side, generate, run_unit
from allotment.plan.stats import p_below, paired_interval
from allotment.traces.scenarios import Workload
from tests.plan.factory import N, build

BASE = build("acme", N(children={"a": N(), "b": N(), "c": N()}), gpus=16)
HEAD = build("acme", N(children={"a": N(3), "b": N(), "c": N()}), gpus=16)


def test_holm_rejects_step_down_and_stops_at_the_first_p_value_it_keeps() -> None:
    p = {"a": 0.001, "b": 0.012, "c": 0.02, "d": 0.5}
    # thresholds 0.05/4, 0.05/3, 0.05/2, 0.05/1: a and b pass, c (0.02 <= 0.025) passes too
    assert holm(p) == {"a", "b", "c"}
    # d would pass its own threshold (0.05) but Holm stops at the first failure
    assert holm({"a": 0.001, "b": 0.03, "d": 0.04}) == {"a"}
    assert holm({}) == frozenset()


def test_the_drop_test_rejected_at_five_percent_is_the_ninety_percent_interval_rule() -> None:
    for diffs in ([-10.0, -12.0, -8.0, -11.0, -9.0], [-6.0, 1.0, -9.0, -2.0, -4.0],
                  [-5.2, -4.9, -5.5, -4.7, -5.1]):
        bound = -5.0
        iv = paired_interval(diffs)
        assert (p_below(diffs, bound) < 0.05) == (iv.high < bound), diffs


@dataclass(frozen=True)
class _Run:
    side: str
    seed: int
    metrics: dict[str, Any]
    cached: bool = False


def _metrics(teams: dict[str, float]) -> dict[str, Any]:
    return {"days": 7.0, "teams": {t: {"charged_gpu_hours": v, "owed_gpu_hours": 1000.0,
                                       "demand_gpu_hours": 2000.0} for t, v in teams.items()}}


def test_one_team_that_clears_its_own_interval_by_a_hair_is_not_flagged_among_fifteen() -> None:
    """Fifteen teams tested at once: a drop whose p-value is about 0.03 is what one team in
    twenty shows by chance, so Holm keeps none of it; a drop far beyond noise is still kept."""
    teams = [f"t{i:02d}" for i in range(15)]
    hair = [-90.0, -45.0, -70.0, -60.0, -85.0]  # mean -70: interval just below -50 (5% of 1000)
    big = [-400.0, -420.0, -390.0, -410.0, -405.0]
    assert paired_interval(hair).high < -50.0  # each alone, the old rule flags it
    runs = []
    for seed in range(5):
        runs.append(_Run("base", seed, _metrics(dict.fromkeys(teams, 1000.0))))
        after = dict.fromkeys(teams, 1000.0)
        after["t00"] += hair[seed]
        after["t01"] += big[seed]
        runs.append(_Run("head", seed, _metrics(after)))
    cfg = build("acme", N(children={t: N() for t in teams}), gpus=16)
    imp = summarize(cfg, cfg, runs, workload="w", workload_key="k", days=7.0,
                    seeds=tuple(range(5)), cluster="c1")
    flagged = {t.team for t in imp.teams if t.flagged}
    assert flagged == {"t01"}


def test_a_team_the_change_cuts_is_judged_among_the_cut_teams_not_among_fifteen() -> None:
    """The same hair's drop of t00 (p about 0.03), now with t00's share cut by the change: the
    cut team is a hypothesis the diff names before any simulation, tested in its own family at
    5%, so it is flagged; the untouched teams stay a family of their own, and none of them is."""
    teams = [f"t{i:02d}" for i in range(15)]
    hair = [-90.0, -45.0, -70.0, -60.0, -85.0]
    runs = []
    for seed in range(5):
        runs.append(_Run("base", seed, _metrics(dict.fromkeys(teams, 1000.0))))
        after = dict.fromkeys(teams, 1000.0)
        after["t00"] += hair[seed]
        runs.append(_Run("head", seed, _metrics(after)))
    base = build("acme", N(children={t: N() for t in teams}), gpus=16)
    head = build("acme", N(children={t: N(0.9 if t == "t00" else 1.0) for t in teams}), gpus=16)
    imp = summarize(base, head, runs, workload="w", workload_key="k", days=7.0,
                    seeds=tuple(range(5)), cluster="c1")
    assert {t.team for t in imp.teams if t.entitlement_cut} == {"t00"}
    assert {t.team for t in imp.teams if t.flagged} == {"t00"}


def test_holm_in_families_tests_the_cut_teams_apart_from_the_others() -> None:
    p = {"cut": 0.03, "a": 0.004, "b": 0.03}
    # one family of three: 0.004 <= 0.05/3 passes, then 0.03 > 0.05/2 stops
    assert holm(p) == {"a"}
    # the cut team alone at 0.05; a and b at 0.05/2 then 0.05
    assert holm_in_families(p, frozenset({"cut"})) == {"cut", "a", "b"}


def test_demand_is_drawn_from_the_base_alone_so_both_sides_replay_the_same_jobs() -> None:
    """Team a's share triples in head; the generated work of every team is the same whether head
    is the base itself or the PR, and both sides replay exactly those jobs."""
    w_pr = generate("ai2", BASE, HEAD, (), "c1", 1.0, 3)
    w_same = generate("ai2", BASE, BASE, (), "c1", 1.0, 3)
    assert w_pr.jobs == w_same.jobs
    assert for_side(w_pr, BASE, {}).jobs == for_side(w_pr, HEAD, {}).jobs == w_pr.jobs
    demand_a = sum(j.gpus * j.work for j in w_pr.jobs if j.account == "a")
    # drawn from head instead, a's demand would follow its new share (3/5 of the cluster)
    from_head = generate("ai2", HEAD, HEAD, (), "c1", 1.0, 3)
    assert sum(j.gpus * j.work for j in from_head.jobs if j.account == "a") > 1.5 * demand_a


def _one_job_unit(warmup_days: float, submit: float) -> dict[str, Any]:
    job = JobSpec(id="j1", submit=submit, account="a", gpus=4, work=3600.0, min_runtime=600.0)
    setup = Setup(BASE, BASE, (), "c1", 1.0, "ai2", None, warmup_days=warmup_days)
    unit = Unit(setup, 1, (Task("base", 1, "k"),))
    from allotment.plan import impact_units

    orig = impact_units.workload
    impact_units.workload = lambda s, seed: Workload.of([job])  # type: ignore[assignment]
    try:
        (m,) = run_unit(unit)
    finally:
        impact_units.workload = orig  # type: ignore[assignment]
    return m


def test_work_done_during_the_warm_up_is_left_out_of_every_number() -> None:
    """An hour of 4 GPUs at t = 0 counts when there is no warm-up and not at all after a
    one-day warm-up; the same hour inside the measured day counts again."""
    cold = _one_job_unit(0.0, 0.0)
    assert cold["teams"]["a"]["charged_gpu_hours"] == pytest.approx(4.0)
    warm = _one_job_unit(1.0, 0.0)
    assert warm["days"] == 1.0 and warm["warmup_days"] == 1.0
    assert warm["teams"]["a"]["charged_gpu_hours"] == 0.0
    assert warm["teams"]["a"]["demand_gpu_hours"] == 0.0
    later = _one_job_unit(1.0, 86400.0 + 7200.0)
    assert later["teams"]["a"]["charged_gpu_hours"] == pytest.approx(4.0)


def test_the_plans_entitlement_is_the_compilers_in_the_clusters_gpu_hours_per_week() -> None:
    runs = [_Run("base", 1, _metrics({"a": 1.0, "b": 1.0, "c": 1.0})),
            _Run("head", 1, _metrics({"a": 1.0, "b": 1.0, "c": 1.0}))]
    imp = summarize(BASE, HEAD, runs, workload="w", workload_key="k", days=7.0, seeds=(1,),
                    cluster="c1")
    compiled = {n["name"]: n for n in _compiled_nodes(HEAD)}
    base_nodes = {n["name"]: n for n in _compiled_nodes(BASE)}
    for t in imp.teams:
        assert t.entitlement_week_after == pytest.approx(
            compiled[t.team]["entitlement_gpus"]["c1"] * WEEK_HOURS, abs=0.01 * WEEK_HOURS)
        assert t.entitlement_week_before == pytest.approx(
            base_nodes[t.team]["entitlement_gpus"]["c1"] * WEEK_HOURS, abs=0.01 * WEEK_HOURS)
    a = next(t for t in imp.teams if t.team == "a")
    assert a.entitlement_week_after == pytest.approx(16 * 0.6 * 168)


def _compiled_nodes(cfg: Any) -> list[dict[str, Any]]:
    """What ``allot compile --format json`` prints for every node."""
    nodes: list[dict[str, Any]] = to_dict(cfg)["nodes"]
    return nodes


def _cluster_metrics(in_service: float, charged: float, free: float) -> dict[str, Any]:
    return {**_metrics({"a": 1.0, "b": 1.0, "c": 1.0}), "in_service_gpu_hours": in_service,
            "charged_gpu_hours": charged, "unallocated_gpu_hours": free, "occupancy": 0.9}


def test_a_capacity_cut_says_how_much_of_it_unallocated_work_absorbed() -> None:
    from allotment.plan.render_view import overall_text

    smaller = build("acme", N(children={"a": N(), "b": N(), "c": N()}), gpus=8)
    runs = []
    for seed, wobble in ((1, 0.0), (2, 10.0), (3, -10.0)):
        runs.append(_Run("base", seed, _cluster_metrics(2000.0 + wobble, 1500.0, 400.0)))
        runs.append(_Run("head", seed, _cluster_metrics(1000.0 + wobble, 1400.0 + wobble, 0.0)))
    imp = summarize(BASE, smaller, runs, workload="w", workload_key="k", days=7.0,
                    seeds=(1, 2, 3), cluster="c1")
    assert imp.capacity is not None and imp.capacity.absorbed == pytest.approx(0.4)
    assert "of the -1,000 GPU-h/week change in service, unallocated work took -400 (40%)" in (
        overall_text(imp))
    # the same numbers without a capacity change in the PR: the side's luck, not a cut
    same = summarize(BASE, HEAD, runs, workload="w", workload_key="k", days=7.0,
                     seeds=(1, 2, 3), cluster="c1")
    assert same.capacity is not None and same.capacity.absorbed is None
    assert "unallocated work took" not in overall_text(same)


def test_a_simulated_plan_states_its_unit_and_warm_up_and_follows_the_json_schema(
    small_repo: Any,
) -> None:
    import json
    from pathlib import Path

    import jsonschema

    from allotment.plan.build import PlanRequest, make_plan
    from allotment.plan.impact import ImpactRunner
    from allotment.plan.model import Impact
    from allotment.plan.plan_json import render_json
    from allotment.plan.simcache import SimCache

    small_repo.switch("pr", create=True)
    small_repo.set_share("budgets/acme/ml/budget.yaml", "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    req = PlanRequest(repo=small_repo.path, base="main", head="pr", at=dt.date(2026, 1, 2))
    runner = ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.25, seeds=(1, 2),
                          cache=SimCache(None), workers=1)
    plan = make_plan(req, runner)
    assert isinstance(plan.impact, Impact) and plan.impact.warmup_days == 7.0
    doc = json.loads(render_json(plan))
    schema = Path(__file__).resolve().parents[2] / "src/allotment/schemas/plan-output.json"
    jsonschema.validate(doc, json.loads(schema.read_text()))
    imp = doc["impact"]
    assert imp["unit"] == "c1 GPU-hours per week" and imp["warmup_days"] == 7.0
    # the small tree's change only moves shares: the head is switched in after the base's warm-up
    assert imp["warmed_under_base"] is True and plan.impact.warmed_under_base
    for t in imp["teams"]:  # owed never exceeds demand; what ran charged never exceeds demand
        assert t["owed_gpu_hours_week_before"] <= t["demand_gpu_hours_week_before"] + 1e-6
        assert t["delivered_gpu_hours_week_before"] <= t["demand_gpu_hours_week_before"] + 1e-6


def _history_plan(repo: Any, head: str) -> Any:
    from allotment.plan.build import PlanRequest, make_plan
    from allotment.plan.impact import ImpactRunner
    from allotment.plan.simcache import SimCache

    req = PlanRequest(repo=repo.path, base="main", head=head, at=dt.date(2026, 1, 2))
    runner = ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.25, seeds=(1, 2),
                          cache=SimCache(None), workers=1, repo=repo.path)
    return make_plan(req, runner).impact


def test_history_named_by_the_base_revision_is_replayed_and_a_pr_cannot_swap_it(
    small_repo: Any,
) -> None:
    """``plan_workload`` in the base's policies names a trace committed in the config repo: the
    plan replays it as the base has it, whatever the PR does to the file or the setting."""
    from allotment.compile.compiler import compile_repo
    from allotment.traces.writer import sorted_items, write_trace

    cfg = compile_repo(small_repo.path, dt.date(2026, 1, 2))
    w = generate("ai2", cfg, cfg, (), "c1", 0.5, 1)
    (small_repo.path / "history").mkdir()
    write_trace(small_repo.path / "history" / "trace.jsonl", sorted_items(w.jobs, w.node_events))
    small_repo.edit_yaml("policies/scheduler.yaml",
                         lambda d: d.update({"plan_workload": "history/trace.jsonl"}))
    small_repo.commit("replay our own history", author="pat@acme.example")
    small_repo.switch("pr", create=True)
    small_repo.set_share("budgets/acme/ml/budget.yaml", "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    clean = _history_plan(small_repo, "pr")
    assert clean.workload == "trace trace.jsonl on c1"
    small_repo.write("history/trace.jsonl", "")  # the PR empties the history ...
    small_repo.edit_yaml("policies/scheduler.yaml", lambda d: d.pop("plan_workload"))  # ... and unsets it
    small_repo.commit("hide the history", author="vera@acme.example")
    tampered = _history_plan(small_repo, "pr")
    assert tampered.workload == clean.workload and tampered.workload_key == clean.workload_key


def test_a_cut_that_reaches_the_team_is_flagged_though_short_of_the_five_percent_line() -> None:
    """The diff names t00's cut and its side before any simulation: its delivery falls by about
    3% of what it got on every seed, clearly a drop, short of the 5% line (-50), and it is
    flagged as the cut reaching it.  t01, untouched, drops the same and is not: an untouched
    team is still judged against the 5% line.  t02, also cut, runs no less: not flagged."""
    teams = [f"t{i:02d}" for i in range(15)]
    small = [-32.0, -28.0, -35.0, -25.0, -30.0]
    runs = []
    for seed in range(5):
        runs.append(_Run("base", seed, _metrics(dict.fromkeys(teams, 1000.0))))
        after = dict.fromkeys(teams, 1000.0)
        after["t00"] += small[seed]
        after["t01"] += small[seed]
        after["t02"] += [5.0, -3.0, 2.0, 0.0, 1.0][seed]
        runs.append(_Run("head", seed, _metrics(after)))
    assert -50.0 < paired_interval(small).high < 0.0
    base = build("acme", N(children={t: N() for t in teams}), gpus=16)
    head = build("acme", N(children={t: N(0.9 if t in ("t00", "t02") else 1.0) for t in teams}),
                 gpus=16)
    imp = summarize(base, head, runs, workload="w", workload_key="k", days=7.0,
                    seeds=tuple(range(5)), cluster="c1")
    assert {t.team for t in imp.teams if t.entitlement_cut} == {"t00", "t02"}
    assert {t.team for t in imp.teams if t.flagged} == {"t00"}


def test_a_cut_for_the_flag_is_a_fall_of_at_least_the_flag_threshold_of_the_entitlement() -> None:
    """A rounding error (doubling every root share moves no absolute share) is no cut, and nor
    is a 1% fall (a neighbour's share 50 -> 51): too small to make a drop beyond the 5% line,
    so judged as untouched.  A 10% cut is one."""
    from allotment.plan.cut_confirmation import is_cut

    assert not is_cut(1613.0, 1613.0 * (1 - 1e-15), 0.05)
    assert not is_cut(1613.0, 1613.0, 0.0)
    assert not is_cut(1000.0, 990.0, 0.05)
    assert is_cut(1613.0, 1452.0, 0.05)
    assert is_cut(1000.0, 950.0, 0.05)
    assert is_cut(1000.0, 0.0, 0.05)  # a team removed
